package live

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Paths of a live initramfs (src/live/mod.rs, src/live/customize.rs).
const (
	// LiveStampPath marks a live initramfs.
	LiveStampPath = "etc/coreos-live-initramfs"
	// InitrdFeaturesPath is the OS's feature flags in the initramfs.
	InitrdFeaturesPath = "etc/coreos/features.json"
	// DestConfigPath is where the live system gets the installed
	// system's config.
	DestConfigPath = "/etc/coreos/dest.ign"
	// InstallerDir holds the installer's config files in the live system;
	// flint's live installer reads it as coreos-installer does.
	InstallerDir = "/etc/coreos/installer.d"
)

// liveSpec is the spec version of the configs customize writes, as
// coreos-installer's (src/io/ignition.rs uses ignition_config::v3_3).
const liveSpec = "3.3.0"

// NamedFile is a file given on the command line: its name (the base of
// its path) and contents.
type NamedFile struct {
	Name string
	Data []byte
}

// Customization is `iso customize` and `pxe customize`'s options, read:
// configs already checked and in JSON, files read.
type Customization struct {
	Features        Features
	DestIgnition    [][]byte
	DestDevice      string
	DestConsole     []string
	DestKargAppend  []string
	DestKargDelete  []string
	NetworkKeyfiles []NamedFile
	IgnitionCA      [][]byte
	PreInstall      []NamedFile
	PostInstall     []NamedFile
	InstallerConfig []NamedFile
	LiveIgnition    [][]byte
}

// ignConfig is the part of a config customize writes.
type ignConfig struct {
	Ignition struct {
		Config *struct {
			Merge []resource `json:"merge"`
		} `json:"config,omitempty"`
		Security *struct {
			TLS struct {
				CertificateAuthorities []resource `json:"certificateAuthorities"`
			} `json:"tls"`
		} `json:"security,omitempty"`
		Version string `json:"version"`
	} `json:"ignition"`
	Storage *struct {
		Files []ignFile `json:"files"`
	} `json:"storage,omitempty"`
	Systemd *struct {
		Units []ignUnit `json:"units"`
	} `json:"systemd,omitempty"`
}

type resource struct {
	Compression string `json:"compression"`
	Source      string `json:"source"`
}

type ignFile struct {
	Path     string   `json:"path"`
	Contents resource `json:"contents"`
	Mode     int      `json:"mode"`
}

type ignUnit struct {
	Contents string `json:"contents"`
	Enabled  bool   `json:"enabled"`
	Name     string `json:"name"`
}

// makeResource is a data URL of data gzipped, as upstream's make_resource.
func makeResource(data []byte) resource {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(data)
	zw.Close()
	return resource{Compression: "gzip", Source: "data:;base64," + base64.StdEncoding.EncodeToString(b.Bytes())}
}

func newIgn() *ignConfig {
	c := &ignConfig{}
	c.Ignition.Version = liveSpec
	return c
}

func (c *ignConfig) merge(cfg []byte) {
	if c.Ignition.Config == nil {
		c.Ignition.Config = &struct {
			Merge []resource `json:"merge"`
		}{}
	}
	c.Ignition.Config.Merge = append(c.Ignition.Config.Merge, makeResource(cfg))
}

func (c *ignConfig) addCA(pem []byte) {
	if c.Ignition.Security == nil {
		c.Ignition.Security = &struct {
			TLS struct {
				CertificateAuthorities []resource `json:"certificateAuthorities"`
			} `json:"tls"`
		}{}
	}
	c.Ignition.Security.TLS.CertificateAuthorities = append(c.Ignition.Security.TLS.CertificateAuthorities, makeResource(pem))
}

func (c *ignConfig) addFile(path string, data []byte, mode int) error {
	if c.Storage == nil {
		c.Storage = &struct {
			Files []ignFile `json:"files"`
		}{}
	}
	for _, f := range c.Storage.Files {
		if f.Path == path {
			return fmt.Errorf("config already specifies path %s", path)
		}
	}
	c.Storage.Files = append(c.Storage.Files, ignFile{Path: path, Contents: makeResource(data), Mode: mode})
	return nil
}

func (c *ignConfig) addUnit(name, contents string) error {
	if c.Systemd == nil {
		c.Systemd = &struct {
			Units []ignUnit `json:"units"`
		}{}
	}
	for _, u := range c.Systemd.Units {
		if u.Name == name {
			return fmt.Errorf("config already specifies unit %s", name)
		}
	}
	c.Systemd.Units = append(c.Systemd.Units, ignUnit{Name: name, Contents: contents, Enabled: true})
	return nil
}

func (c *ignConfig) bytes() []byte {
	b, _ := json.Marshal(c)
	return append(b, '\n')
}

// installerConfig is the installer config customize writes, in
// coreos-installer's option names (flint install reads the same keys).
type installerConfig struct {
	IgnitionFile string   `yaml:"ignition-file,omitempty"`
	Console      []string `yaml:"console,omitempty"`
	AppendKarg   []string `yaml:"append-karg,omitempty"`
	DeleteKarg   []string `yaml:"delete-karg,omitempty"`
	CopyNetwork  bool     `yaml:"copy-network,omitempty"`
	DestDevice   string   `yaml:"dest-device,omitempty"`
}

// hookUnit is the unit that runs a pre- or post-install script in the
// live system, ordered against both flint's live installer
// (flint-installer.service, flint-installer.target) and coreos-installer's
// (coreos-installer.service and its targets), so that one customised
// image works with either installer.
func hookUnit(typ, name string) string {
	title := strings.ToUpper(typ[:1]) + typ[1:]
	var deps, target string
	if typ == "pre" {
		deps = "After=coreos-installer-pre.target\nBefore=flint-installer.service coreos-installer.service"
		target = "flint-installer.service coreos-installer.service"
	} else {
		deps = "After=flint-installer.service coreos-installer.service\nBefore=flint-installer.target coreos-installer.target"
		target = "flint-installer.target coreos-installer.target"
	}
	return "# Generated by flint {iso|pxe} customize\n\n" +
		"[Unit]\n" +
		"Description=" + title + "-Install Script (" + name + ")\n" +
		"Documentation=https://coreos.github.io/coreos-installer/customizing-install/\n" +
		deps + "\n\n" +
		"[Service]\n" +
		"Type=oneshot\n" +
		"ExecStart=/usr/local/bin/" + typ + "-install-" + name + "\n" +
		"RemainAfterExit=true\n" +
		"StandardOutput=kmsg+console\n" +
		"StandardError=kmsg+console\n\n" +
		"[Install]\n" +
		"RequiredBy=" + target + "\n"
}

// Initrd builds the embed-area (or appended) initrd's files, as
// coreos-installer's LiveInitrd does (src/live/customize.rs): keyfiles in
// the network directory; a live config that merges the --live-ignition
// configs, trusts the CAs, and writes the installer config, the installed
// system's config and the hook scripts and units. Notes are what upstream
// tells the user on standard error.
func (c Customization) Initrd() (map[string][]byte, []string, error) {
	members := map[string][]byte{}
	var notes []string
	var live, dest *ignConfig
	liveCfg := func() *ignConfig {
		if live == nil {
			live = newIgn()
		}
		return live
	}
	var inst *installerConfig
	instCfg := func() *installerConfig {
		if inst == nil {
			inst = &installerConfig{}
		}
		return inst
	}
	serial := 0
	addInstallerFile := func(name string, data []byte) error {
		if !c.Features.InstallerConfig {
			return errors.New("This OS image does not support customizing installer configuration.")
		}
		if err := liveCfg().addFile(fmt.Sprintf("%s/%04d-%s", InstallerDir, serial, name), data, 0o600); err != nil {
			return err
		}
		serial++
		return nil
	}
	copyNetwork := false

	if c.DestDevice != "" {
		instCfg().DestDevice = c.DestDevice
	}
	for _, con := range c.DestConsole {
		if !c.Features.InstallerConfigDirectives.Console {
			return nil, nil, errors.New("This OS image does not support customizing the destination console.")
		}
		instCfg().Console = append(instCfg().Console, con)
	}
	for _, k := range c.DestKargAppend {
		instCfg().AppendKarg = append(instCfg().AppendKarg, k)
	}
	for _, k := range c.DestKargDelete {
		instCfg().DeleteKarg = append(instCfg().DeleteKarg, k)
	}
	for _, k := range c.NetworkKeyfiles {
		if !c.Features.LiveInitrdNetwork {
			return nil, nil, errors.New("This OS image does not support customizing network settings.")
		}
		p := NetworkDir + "/" + k.Name
		if _, dup := members[p]; dup {
			return nil, nil, fmt.Errorf("config already specifies keyfile %s", k.Name)
		}
		members[p] = k.Data
		copyNetwork = true
	}
	for _, ca := range c.IgnitionCA {
		liveCfg().addCA(ca)
	}
	for _, h := range []struct {
		typ   string
		files []NamedFile
	}{{"pre", c.PreInstall}, {"post", c.PostInstall}} {
		for _, f := range h.files {
			if err := liveCfg().addFile("/usr/local/bin/"+h.typ+"-install-"+f.Name, f.Data, 0o700); err != nil {
				return nil, nil, err
			}
			if err := liveCfg().addUnit(h.typ+"-install-"+f.Name+".service", hookUnit(h.typ, f.Name)); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, f := range c.InstallerConfig {
		if err := addInstallerFile(f.Name, f.Data); err != nil {
			return nil, nil, err
		}
	}
	for _, cfg := range c.LiveIgnition {
		liveCfg().merge(cfg)
	}

	if len(c.DestIgnition) > 0 {
		var data []byte
		if len(c.DestIgnition) == 1 && len(c.IgnitionCA) == 0 {
			// One config and nothing of ours to add: embed it as it is,
			// rather than wrapped in another level of merging.
			data = append(bytes.TrimRight(c.DestIgnition[0], "\n"), '\n')
		} else {
			dest = newIgn()
			for _, ca := range c.IgnitionCA {
				dest.addCA(ca)
			}
			for _, cfg := range c.DestIgnition {
				dest.merge(cfg)
			}
			data = dest.bytes()
		}
		if err := liveCfg().addFile(DestConfigPath, data, 0o600); err != nil {
			return nil, nil, err
		}
		instCfg().IgnitionFile = DestConfigPath
	}
	if serial > 0 || inst != nil {
		if inst != nil && inst.DestDevice != "" {
			notes = append(notes, fmt.Sprintf("Boot media will automatically install to %s without confirmation.", inst.DestDevice))
		} else {
			notes = append(notes, "Boot media will automatically run installer.")
		}
		if copyNetwork {
			instCfg().CopyNetwork = true
		}
	}
	if inst != nil {
		y, err := yaml.Marshal(inst)
		if err != nil {
			return nil, nil, fmt.Errorf("serializing installer config: %w", err)
		}
		if err := addInstallerFile("customize.yaml", y); err != nil {
			return nil, nil, err
		}
	}
	// No empty config: the live ISO turns autologin off when it sees one.
	if live != nil {
		members[IgnitionPath] = live.bytes()
	}
	return members, notes, nil
}

// ParseFeatures reads a features.json.
func ParseFeatures(data []byte) (Features, error) {
	var f Features
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("parsing OS features: %w", err)
	}
	return f, nil
}
