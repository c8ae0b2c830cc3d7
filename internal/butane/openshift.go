package butane

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flintboot/flint/config"
)

// openshiftRules are what an openshift version adds to the fcos version it
// builds on (Butane's config/openshift/v4_N translate.go and validate.go).
type openshiftRules struct {
	// noAutoCompress: the MCO of 4.8 and 4.9 cannot read gzipped
	// contents, so inline and local contents are never gzipped.
	noAutoCompress bool
	// filters are the config fields the Machine Config Operator does not
	// support, as generic paths under spec.config (spec.config.storage.links
	// is "storage.links"). They apply to MachineConfig output only.
	filters map[string]string
	// ignoreEmpty lists filtered fields whose pointer to an empty value is
	// allowed (inline contents get compression: "" from the translation).
	ignoreEmpty map[string]bool
	specialMode bool // 4.10+: no setuid/setgid/sticky file modes
	formatNone  bool // 4.14+: no filesystem format "none"
	cexKarg     bool // 4.19+: CEX root needs rd.luks.key=/etc/luks/cex.key
	// grubContents (4.23.0-experimental): the MCO cannot append, so the
	// GRUB user.cfg grub.users writes gets contents instead.
	grubContents bool
	// fipsCipher (4.8 to 4.19): with openshift.fips, every LUKS volume
	// without a cipher option gets FIPS 140-2's --cipher
	// aes-cbc-essiv:sha256 (the default XTS mode is not allowed); 4.20
	// stopped overriding the default (Butane's release notes for 4.20.0).
	fipsCipher bool
}

// Butane's messages for the MachineConfig checks (config/common/errors.go).
const (
	errGroupSupport        = "groups are not supported in this spec version"
	errUserFieldSupport    = `fields other than "name", "ssh_authorized_keys", and "password_hash" (4.13.0+) are not supported in this spec version`
	errDirectorySupport    = "directories are not supported in this spec version"
	errFileAppendSupport   = "appending to files is not supported in this spec version"
	errFileHeaderSupport   = "file HTTP headers are not supported in this spec version"
	errLinkSupport         = "links are not supported in this spec version"
	errFileCompression     = "file compression is not supported in this spec version"
	errKernelArgumentOCP   = "this section cannot be used for kernel arguments in this spec version; use openshift.kernel_arguments instead"
	errBtrfsSupport        = "btrfs is not supported in this spec version"
	errFilesystemNone      = `format "none" is not supported in this spec version`
	errFileSchemeSupport   = "file contents source must be data URL in this spec version"
	errFileSpecialMode     = "special mode bits are not supported in this spec version"
	errUserNameSupport     = `users other than "core" are not supported in this spec version`
	errNameRequired        = "metadata.name is required"
	errRoleRequired        = "machineconfiguration.openshift.io/role label is required"
	errInvalidKernelType   = `must be empty, "default", or "realtime"`
	errMissingKernelArgCex = "'rd.luks.key=/etc/luks/cex.key' must be set as kernel argument when CEX is enabled for the boot device"
	errFieldElided         = "field ignored in raw mode"
)

// mcoFilters builds a version's filters: the user fields the MCO ignores
// or refuses, directories, appends, headers, links, and what each version
// adds.
func mcoFilters(extra map[string]string) map[string]string {
	f := map[string]string{
		"passwd.groups":                      errGroupSupport,
		"storage.directories":                errDirectorySupport,
		"storage.files.append":               errFileAppendSupport,
		"storage.files.contents.httpHeaders": errFileHeaderSupport,
		"storage.links":                      errLinkSupport,
	}
	for _, k := range []string{"gecos", "groups", "homeDir", "noCreateHome", "noLogInit", "noUserGroup",
		"primaryGroup", "shell", "shouldExist", "system", "uid"} {
		f["passwd.users."+k] = errUserFieldSupport
	}
	for k, v := range extra {
		f[k] = v
	}
	return f
}

var (
	ocp48 = openshiftRules{
		noAutoCompress: true, fipsCipher: true,
		filters: mcoFilters(map[string]string{
			"passwd.users.passwordHash":          errUserFieldSupport,
			"storage.files.contents.compression": errFileCompression,
		}),
		ignoreEmpty: map[string]bool{"storage.files.contents.compression": true},
	}
	ocp410 = openshiftRules{
		filters:     mcoFilters(map[string]string{"passwd.users.passwordHash": errUserFieldSupport}),
		specialMode: true, fipsCipher: true,
	}
	ocp413 = openshiftRules{filters: mcoFilters(nil), specialMode: true, fipsCipher: true}
	ocp414 = openshiftRules{
		filters:     mcoFilters(map[string]string{"kernelArguments": errKernelArgumentOCP}),
		specialMode: true, formatNone: true, fipsCipher: true,
	}
	ocp419 = openshiftRules{
		filters:     mcoFilters(map[string]string{"kernelArguments": errKernelArgumentOCP}),
		specialMode: true, formatNone: true, cexKarg: true, fipsCipher: true,
	}
	ocp420 = openshiftRules{
		filters:     mcoFilters(map[string]string{"kernelArguments": errKernelArgumentOCP}),
		specialMode: true, formatNone: true, cexKarg: true,
	}
	ocp423 = openshiftRules{
		filters:     mcoFilters(map[string]string{"kernelArguments": errKernelArgumentOCP}),
		specialMode: true, formatNone: true, cexKarg: true, grubContents: true,
	}
)

// grubContents turns the append of /boot/grub2/user.cfg into its contents,
// if it has exactly one (Butane's translateUserGrubCfg: any other number
// means the user wrote the file, and it is left alone).
func (t *translator) grubContents() {
	for i := range t.cfg.Storage.Files {
		f := &t.cfg.Storage.Files[i]
		if f.Path != "/boot/grub2/user.cfg" {
			continue
		}
		if len(f.Append) == 1 {
			fp := idx("$.storage.files", i)
			f.Contents, f.Append = f.Append[0], nil
			t.dec.jsonSrc.set(fp+".contents", t.sourceOf(fp+".append.0"))
		}
		return
	}
}

// luksFIPS adds FIPS 140-2's cipher to every LUKS volume whose options
// name none (--cipher, --cipher=…, -c), as Butane's addLuksFipsOptions
// (config/openshift/v4_19/translate.go) does, after the sugar, so the root
// volume of boot_device.luks gets it too.
func (t *translator) luksFIPS() {
next:
	for i := range t.cfg.Storage.Luks {
		l := &t.cfg.Storage.Luks[i]
		for _, o := range l.Options {
			if o == "--cipher" || o == "-c" || strings.HasPrefix(o, "--cipher=") {
				continue next
			}
		}
		lp := idx("$.storage.luks", i) + ".options"
		fp := t.at("$.openshift.fips")
		if len(l.Options) == 0 {
			t.dec.jsonSrc.set(lp, fp)
		}
		for j := range 2 {
			t.dec.jsonSrc.set(idx(lp, len(l.Options)+j), fp)
		}
		l.Options = append(l.Options, "--cipher", "aes-cbc-essiv:sha256")
	}
}

// openshiftSection is the Butane config's metadata and openshift keys.
type metadata struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
}

type openshiftSection struct {
	KernelArguments []string `json:"kernelArguments"`
	Extensions      []string `json:"extensions"`
	FIPS            *bool    `json:"fips"`
	KernelType      *string  `json:"kernelType"`
}

const roleLabel = "machineconfiguration.openshift.io/role"

// validateOpenShift is Butane's Metadata, OpenShift and Config Validate.
func (t *translator) validateOpenShift() {
	sv := config.SeverityError
	if t.meta.Name == "" {
		t.add(sv, t.at("$.metadata.name"), errNameRequired)
	}
	if t.meta.Labels[roleLabel] == "" {
		t.add(sv, t.at("$.metadata.labels"), errRoleRequired)
	}
	if k := t.ocp.KernelType; k != nil && *k != "" && *k != "default" && *k != "realtime" {
		t.add(sv, t.at("$.openshift.kernel_type"), errInvalidKernelType)
	}
	if !t.prof.ocp.cexKarg {
		return
	}
	hasKarg := slices.Contains(t.ocp.KernelArguments, "rd.luks.key=/etc/luks/cex.key")
	if t.bootDevice != nil && isTrue(t.bootDevice.Luks.Cex.Enabled) && !hasKarg {
		t.add(sv, t.at("$.openshift.kernel_arguments"), errMissingKernelArgCex)
	}
	for _, l := range t.cfg.Storage.Luks {
		if isTrue(l.Cex.Enabled) && l.Name == "root" && !hasKarg {
			t.add(sv, t.at("$.openshift.kernel_arguments"), errMissingKernelArgCex)
			break
		}
	}
}

// checkMachineConfig applies the checks Butane makes on the desugared
// config for RHCOS and the Machine Config Operator (validateRHCOSSupport,
// validateMCOSupport: in both output modes); in raw mode it warns about the
// MachineConfig fields it leaves out.
func (t *translator) checkMachineConfig() {
	sv := config.SeverityError
	rules := t.prof.ocp
	for i, fs := range t.cfg.Storage.Filesystems {
		p := idx("$.storage.filesystems", i) + ".format"
		if fs.Format != nil && *fs.Format == "btrfs" {
			t.add(sv, t.sourceOf(p), errBtrfsSupport)
		}
		if rules.formatNone && fs.Format != nil && *fs.Format == "none" {
			t.add(sv, t.sourceOf(p), errFilesystemNone)
		}
	}
	for i, f := range t.cfg.Storage.Files {
		fp := idx("$.storage.files", i)
		if f.Contents.Source != nil {
			if u, err := url.Parse(*f.Contents.Source); err == nil && u.Scheme != "data" {
				t.add(sv, t.sourceOf(fp+".contents.source"), errFileSchemeSupport)
			}
		}
		if rules.specialMode && f.Mode != nil && *f.Mode&^0o777 != 0 {
			t.add(sv, t.sourceOf(fp+".mode"), errFileSpecialMode)
		}
	}
	for i, u := range t.cfg.Passwd.Users {
		if u.Name != "core" {
			t.add(sv, t.sourceOf(idx("$.passwd.users", i)+".name"), errUserNameSupport)
		}
	}
	if t.opts.Raw {
		for _, f := range []struct {
			set  bool
			path string
		}{
			{len(t.ocp.KernelArguments) > 0, "$.openshift.kernel_arguments"},
			{len(t.ocp.Extensions) > 0, "$.openshift.extensions"},
			{t.ocp.FIPS != nil, "$.openshift.fips"},
			{t.ocp.KernelType != nil, "$.openshift.kernel_type"},
		} {
			if f.set {
				t.add(config.SeverityWarning, t.at(f.path), errFieldElided)
			}
		}
	}
}

// checkMCOFilters applies the Machine Config Operator's field filters, in
// MachineConfig output only (as in Butane, where raw output is checked
// against paths under spec.config that it does not have).
func (t *translator) checkMCOFilters() {
	saved := t.prof.filters
	t.prof.filters = t.prof.ocp.filters
	t.checkFiltersIgnoring(t.prof.ocp.ignoreEmpty)
	t.prof.filters = saved
}

// machineConfig wraps the translated config (JSON) in a MachineConfig and
// writes it as Butane does: through a generic JSON value to YAML with a
// two-space indent, after a header line, without trailing newlines.
func (t *translator) machineConfig(cfgJSON []byte) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":`)
	name, _ := json.Marshal(t.meta.Name)
	b.Write(name)
	if len(t.meta.Labels) > 0 {
		labels, _ := json.Marshal(t.meta.Labels)
		b.WriteString(`,"labels":`)
		b.Write(labels)
	}
	b.WriteString(`},"spec":{"config":`)
	b.Write(cfgJSON)
	spec, _ := json.Marshal(struct {
		KernelArguments []string `json:"kernelArguments,omitempty"`
		Extensions      []string `json:"extensions,omitempty"`
		FIPS            *bool    `json:"fips,omitempty"`
		KernelType      *string  `json:"kernelType,omitempty"`
	}{t.ocp.KernelArguments, t.ocp.Extensions, t.ocp.FIPS, t.ocp.KernelType})
	if rest := spec[1 : len(spec)-1]; len(rest) > 0 {
		b.WriteByte(',')
		b.Write(rest)
	}
	b.WriteString(`}}`)
	var generic any
	if err := json.Unmarshal(b.Bytes(), &generic); err != nil {
		return nil, fmt.Errorf("butane: the MachineConfig: %w", err)
	}
	var out bytes.Buffer
	out.WriteString("# Generated by Butane; do not edit\n")
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(generic); err != nil {
		return nil, fmt.Errorf("butane: writing the MachineConfig: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("butane: writing the MachineConfig: %w", err)
	}
	return bytes.Trim(out.Bytes(), "\n"), nil
}
