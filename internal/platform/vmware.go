package platform

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/flintboot/flint/internal/guestchan/vmware"
	"github.com/flintboot/flint/internal/netconfig"
)

// The vmware platform reads the config from the VM's guestinfo variables,
// which an operator sets in the .vmx file or with govc/vSphere:
//
//	guestinfo.ignition.config.data           the config
//	guestinfo.ignition.config.data.encoding  "", base64, gzip+base64, …
//
// A vApp can instead carry both as OVF properties of the same names; the VMX
// hands the OVF environment document to the guest as guestinfo.ovfenv, and a
// guestinfo variable wins over the OVF property of the same name
// (coreos/ignition internal/providers/vmware/vmware_amd64.go).
//
// Guestinfo is reached over the VMware backdoor (package
// guestchan/vmware); everything here is tested over a fake RPC.

const (
	vmwKeyData     = "ignition.config.data"
	vmwKeyEncoding = "ignition.config.data.encoding"
	// vmwKeyOVFEnv is the guestinfo variable holding the OVF environment
	// document. VMX keys are case-insensitive; Ignition spells it
	// "ovfenv", VMware's documentation "ovfEnv".
	vmwKeyOVFEnv = "ovfenv"
	// vmwOVFPrefix is how guestinfo variables are named as OVF properties.
	vmwOVFPrefix = "guestinfo."

	// vmwDeletedData and vmwDeletedEncoding are what DeleteConfig leaves
	// behind: guestinfo variables cannot be deleted or set to "" from the
	// guest, so the config is replaced by base64 "{}\n", an empty config.
	vmwDeletedData     = "e30K"
	vmwDeletedEncoding = "base64"
)

// vmwareProvider reads the config from VMware guestinfo.
type vmwareProvider struct {
	env Env
	// open reaches the VMX; the real one checks the CPU first and returns
	// ErrNoProvider when this is not a VMware VM (or not amd64).
	open func() (vmware.RPC, error)
}

func newVMware(env Env) Provider {
	return &vmwareProvider{env: env, open: vmware.Open}
}

// FetchConfig returns the decoded guestinfo config, ErrNoConfig when neither
// guestinfo nor the OVF environment holds one, and ErrNoProvider when the
// machine is not a VMware VM.
func (p *vmwareProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	gi, err := p.guestinfo()
	if err != nil {
		return nil, err
	}
	log := p.env.logger().With("op", "vmware guestinfo")

	// The OVF environment only supplies defaults: a failure to read or
	// parse it is logged and the guestinfo variables are still read, as the
	// reference does.
	var ovf map[string]string
	doc, ok, err := gi.Get(ctx, vmwKeyOVFEnv)
	switch {
	case err != nil:
		log.Warn("cannot read the OVF environment; continuing without it", "key", "guestinfo."+vmwKeyOVFEnv, "error", err)
	case ok && doc != "":
		ovf, err = parseOVFProperties([]byte(doc))
		if err != nil {
			log.Warn("cannot parse the OVF environment; continuing without it", "key", "guestinfo."+vmwKeyOVFEnv, "error", err)
		}
	}

	data, ok, err := gi.Get(ctx, vmwKeyData)
	if err != nil {
		return nil, err
	}
	source := "guestinfo." + vmwKeyData
	if !ok {
		data = ovf[vmwOVFPrefix+vmwKeyData]
		source = "OVF property " + vmwOVFPrefix + vmwKeyData
	}
	encoding, ok, err := gi.Get(ctx, vmwKeyEncoding)
	if err != nil {
		return nil, err
	}
	if !ok {
		encoding = ovf[vmwOVFPrefix+vmwKeyEncoding]
	}

	config, err := decodeGuestinfo(data, encoding)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(config) == 0 {
		log.Info("no config in guestinfo or the OVF environment")
		return nil, ErrNoConfig
	}
	log.Info("config read", "source", source, "encoding", encoding, "bytes", len(config))
	return config, nil
}

// DeleteConfig removes the config from the VM so that it is not readable
// after the first boot (it can hold secrets): the guestinfo variables are
// overwritten with an empty config, and the two properties are pruned from
// the OVF environment. It is what ignition-rmcfg does for vmware.
func (p *vmwareProvider) DeleteConfig(ctx context.Context) error {
	gi, err := p.guestinfo()
	if err != nil {
		return err
	}
	log := p.env.logger().With("op", "vmware delete config")

	data, ok, err := gi.Get(ctx, vmwKeyData)
	if err != nil {
		return fmt.Errorf("reading guestinfo.%s: %w", vmwKeyData, err)
	}
	if ok && data != vmwDeletedData {
		log.Info("replacing the config in guestinfo with an empty config")
		if err := gi.Set(ctx, vmwKeyData, vmwDeletedData); err != nil {
			return err
		}
		encoding, _, err := gi.Get(ctx, vmwKeyEncoding)
		if err != nil {
			return fmt.Errorf("reading guestinfo.%s: %w", vmwKeyEncoding, err)
		}
		if encoding != vmwDeletedEncoding {
			if err := gi.Set(ctx, vmwKeyEncoding, vmwDeletedEncoding); err != nil {
				return err
			}
		}
	}

	// Unlike FetchConfig, a failure to read the OVF environment is an
	// error here: ignoring it could leave the config readable.
	doc, ok, err := gi.Get(ctx, vmwKeyOVFEnv)
	if err != nil {
		return fmt.Errorf("reading guestinfo.%s: %w", vmwKeyOVFEnv, err)
	}
	if !ok || doc == "" {
		return nil
	}
	pruned, changed, err := pruneOVFProperties([]byte(doc), vmwOVFPrefix+vmwKeyData, vmwOVFPrefix+vmwKeyEncoding)
	if err != nil {
		return fmt.Errorf("guestinfo.%s: %w", vmwKeyOVFEnv, err)
	}
	if !changed {
		return nil
	}
	log.Info("removing the config from the OVF environment")
	return gi.Set(ctx, vmwKeyOVFEnv, string(pruned))
}

// vmwKeyNetworkKargs is Afterburn's guestinfo variable for the
// initramfs's network kernel arguments (coreos/afterburn
// src/providers/vmware/amd64.rs, INITRD_NET_KARGS): a static address set
// through the hypervisor reaches the initramfs before a remote config is
// fetched.
const vmwKeyNetworkKargs = "afterburn.initrd.network-kargs"

// NetworkKargs returns guestinfo.afterburn.initrd.network-kargs; ok is false
// when it is not set.
func (p *vmwareProvider) NetworkKargs(ctx context.Context) (kargs string, ok bool, err error) {
	g, err := p.guestinfo()
	if err != nil {
		return "", false, err
	}
	v, ok, err := g.Get(ctx, vmwKeyNetworkKargs)
	if err != nil {
		return "", false, fmt.Errorf("vmware: %w", err)
	}
	return strings.TrimSpace(v), ok && strings.TrimSpace(v) != "", nil
}

// Afterburn's guestinfo variables of the cloud-init style metadata
// (coreos/afterburn src/providers/vmware/amd64.rs).
const (
	vmwKeyMetadata         = "metadata"
	vmwKeyMetadataEncoding = "metadata.encoding"
)

// NetplanDoc returns the netplan document of guestinfo.metadata, as
// Afterburn's parse_metadata and parse_netplan_config make it
// (netconfig.NetplanFromMetadata); nil when the VM has no metadata.
func (p *vmwareProvider) NetplanDoc(ctx context.Context) ([]byte, error) {
	g, err := p.guestinfo()
	if err != nil {
		return nil, err
	}
	enc, hasEnc, err := g.Get(ctx, vmwKeyMetadataEncoding)
	if err != nil {
		return nil, fmt.Errorf("vmware: %w", err)
	}
	raw, hasRaw, err := g.Get(ctx, vmwKeyMetadata)
	if err != nil {
		return nil, fmt.Errorf("vmware: %w", err)
	}
	var doc []byte
	switch {
	case hasEnc && (enc == "base64" || enc == "b64") && hasRaw:
		doc, err = base64.StdEncoding.DecodeString(raw)
	case hasEnc && (enc == "gzip+base64" || enc == "gz+b64") && hasRaw:
		if doc, err = base64.StdEncoding.DecodeString(raw); err == nil {
			doc, err = gunzip(doc)
		}
	case hasEnc && enc != "":
		return nil, fmt.Errorf("vmware: unknown guestinfo.metadata.encoding '%s'", enc)
	case hasRaw:
		doc = []byte(raw)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vmware: guestinfo.metadata: %w", err)
	}
	if !utf8.Valid(doc) {
		return nil, fmt.Errorf("vmware: guestinfo.metadata: invalid utf-8 sequence: %w", ErrProtocol)
	}
	out, err := netconfig.NetplanFromMetadata(doc)
	if err != nil {
		return nil, fmt.Errorf("vmware: guestinfo.metadata: %w: %w", ErrProtocol, err)
	}
	return out, nil
}

// vmwareNetplan is the platform table's NetplanDoc for vmware.
func vmwareNetplan(ctx context.Context, h *Host) ([]byte, error) {
	return newVMware(h.Env).(*vmwareProvider).NetplanDoc(ctx)
}

// guestinfo checks that this is a VMware VM and opens the RPC channel.
func (p *vmwareProvider) guestinfo() (vmware.Guestinfo, error) {
	vendor, err := os.ReadFile(p.env.path("/sys/class/dmi/id/sys_vendor"))
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(vendor)), "VMware") {
		// The backdoor I/O instruction faults on anything but VMware, so
		// the firmware's word comes first (package guestchan/vmware checks
		// the CPU too, and survives a fault).
		return vmware.Guestinfo{}, fmt.Errorf("vmware: DMI system vendor is not VMware: %w", ErrNoProvider)
	}
	rpc, err := p.open()
	if errors.Is(err, vmware.ErrUnreachable) {
		err = fmt.Errorf("%w: %w", err, ErrNoProvider)
	}
	if err != nil {
		return vmware.Guestinfo{}, fmt.Errorf("vmware: %w", err)
	}
	return vmware.Guestinfo{RPC: rpc}, nil
}

// decodeGuestinfo decodes the config as ignition.config.data.encoding says.
// The names are Ignition's (coreos/ignition
// internal/providers/vmware/vmware_amd64.go).
func decodeGuestinfo(data, encoding string) ([]byte, error) {
	switch encoding {
	case "":
		return []byte(data), nil
	case "b64", "base64":
		return vmwBase64(data)
	case "gz", "gzip":
		return gunzip([]byte(data))
	case "gz+base64", "gzip+base64", "gz+b64", "gzip+b64":
		z, err := vmwBase64(data)
		if err != nil {
			return nil, err
		}
		return gunzip(z)
	}
	return nil, fmt.Errorf("unsupported encoding %q (want one of \"\", base64, b64, gzip, gz, gzip+base64, gz+base64, gzip+b64, gz+b64)", encoding)
}

// vmwBase64 decodes standard base64.
func vmwBase64(data string) ([]byte, error) {
	// StdEncoding skips \r and \n, so wrapped base64 (base64(1) output)
	// decodes too.
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, fmt.Errorf("decoding base64: %w", err)
	}
	return b, nil
}

// ovfProperty is one <Property key=… value=…/> of an OVF environment, with
// the byte range of its element in the document.
type ovfProperty struct {
	key, value string
	start, end int64
}

// scanOVFProperties finds the Property elements of an OVF environment
// document (DSP0243 §11): Environment > PropertySection > Property, with
// key and value attributes (normally in the OVF environment namespace,
// oe:key/oe:value). Like Ignition, names are matched without regard
// to namespaces, and anything after the root element is ignored.
func scanOVFProperties(doc []byte) ([]ovfProperty, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	var (
		props []ovfProperty
		// path holds the local names of the open elements.
		path []string
	)
	for {
		offset := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			if len(path) > 0 {
				return nil, fmt.Errorf("OVF environment: unexpected end of document inside <%s>", path[len(path)-1])
			}
			return props, nil
		}
		if err != nil {
			return nil, fmt.Errorf("OVF environment: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			path = append(path, t.Name.Local)
			if len(path) == 3 && path[1] == "PropertySection" && path[2] == "Property" {
				var p ovfProperty
				for _, a := range t.Attr {
					// The last attribute of a name wins, as with
					// encoding/xml's Unmarshal.
					switch a.Name.Local {
					case "key":
						p.key = a.Value
					case "value":
						p.value = a.Value
					}
				}
				p.start = offset
				props = append(props, p)
			}
		case xml.EndElement:
			if len(path) == 3 && path[1] == "PropertySection" && path[2] == "Property" {
				props[len(props)-1].end = d.InputOffset()
			}
			path = path[:len(path)-1]
			if len(path) == 0 {
				return props, nil
			}
		}
	}
}

// parseOVFProperties returns the properties of an OVF environment by key;
// a later duplicate wins.
func parseOVFProperties(doc []byte) (map[string]string, error) {
	props, err := scanOVFProperties(doc)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(props))
	for _, p := range props {
		m[p.key] = p.value
	}
	return m, nil
}

// pruneOVFProperties removes the Property elements with the given keys from
// an OVF environment document, cutting them out of the original bytes so the
// rest of the document (namespaces, other properties, formatting) is kept
// exactly. It removes every Property parseOVFProperties would read with such
// a key, so nothing FetchConfig could use survives. changed is false, and
// doc is returned as is, when there was nothing to remove.
func pruneOVFProperties(doc []byte, keys ...string) (pruned []byte, changed bool, err error) {
	props, err := scanOVFProperties(doc)
	if err != nil {
		return nil, false, err
	}
	drop := map[string]bool{}
	for _, k := range keys {
		drop[k] = true
	}
	var out []byte
	last := int64(0)
	for _, p := range props {
		if !drop[p.key] {
			continue
		}
		start := p.start
		// Take the element's indentation and line break with it.
		for start > last && (doc[start-1] == ' ' || doc[start-1] == '\t') {
			start--
		}
		if start > last && doc[start-1] == '\n' {
			start--
			if start > last && doc[start-1] == '\r' {
				start--
			}
		}
		out = append(out, doc[last:start]...)
		last = p.end
		changed = true
	}
	if !changed {
		return doc, false, nil
	}
	out = append(out, doc[last:]...)
	return out, true, nil
}
