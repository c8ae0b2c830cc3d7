package kickstart

import (
	"fmt"
	"path"
	"strings"

	"github.com/flintboot/flint/config"
)

// section translates one %section.
func (t *translator) section(it item) {
	at := it.at
	switch it.name {
	case "%post":
		t.post(it)
	case "%ignition":
		t.ignition(it)
	case "%packages":
		n := 0
		for _, l := range it.body {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				n++
			}
		}
		t.note(at, "%packages", "%%packages (%d entries): nothing to translate: packages are chosen when the image is built; "+
			"add them to the image (a Containerfile for bootc, an rpm-ostree layer, or the image build's package list)", n)
	case "%pre", "%pre-install":
		t.rep.addSpan(sevError, at, it.end, "%s is not translatable: nothing runs before flint; put what the script computes into the kickstart itself, "+
			"or into a first-boot unit", it.name)
	case "%onerror", "%traceback":
		t.note(at, it.name, "%s: nothing to translate: a failed first boot stops in the emergency shell with the reason in the journal (docs/operator-notes.md)", it.name)
	case "%certificate":
		t.certificate(it)
	case "%addon", "%anaconda":
		t.note(at, it.name, "%s: nothing to translate: it configures the installer (its add-ons and user interface)", it.name)
	default:
		t.rep.addSpan(sevError, at, it.end, "unknown section %s: not translated", it.name)
	}
}

// post turns a %post script into a file and a oneshot unit that runs it
// once, on the first boot.
func (t *translator) post(it item) {
	at := it.at
	o := parseOpts(it.args, "--nochroot", "--erroronfail")
	if o.flag("--nochroot") {
		t.rep.addSpan(sevError, at, it.end, "%%post --nochroot is not translatable: it works on the installer's environment, which a first boot does not have; "+
			"move what the target needs into the config or a %%post without --nochroot")
		return
	}
	interp, ok := o.str("--interpreter")
	if !ok {
		interp = "/bin/sh"
	}
	t.postNumber++
	name := fmt.Sprintf("kickstart-post-%d", t.postNumber)
	script := "/etc/flint/" + name
	t.file(at, script, 0o700, strings.Join(it.body, "\n")+"\n")
	var b strings.Builder
	fmt.Fprintf(&b, "# %%post from %s\n[Unit]\nDescription=kickstart %%post from %s\nConditionFirstBoot=yes\n"+
		"Wants=network-online.target\nAfter=network-online.target\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=%s %s\n",
		at, path.Base(at.file)+fmt.Sprintf(" line %d", at.line), interp, script)
	if log, ok := o.str("--log"); ok {
		fmt.Fprintf(&b, "StandardOutput=append:%s\nStandardError=append:%s\n", log, log)
	}
	b.WriteString("\n[Install]\nWantedBy=multi-user.target\n")
	t.unit(at, config.Unit{Name: name + ".service", Enabled: ptr(true), Contents: ptr(b.String())})
	t.rep.add(sevWarning, at, "%%post becomes %s.service, which runs %s once, on the first boot, on the running system (not in the installer's "+
		"chroot, and after the network is up): check that the script still makes sense there", name, script)
	if o.flag("--erroronfail") {
		t.rep.add(sevWarning, at, "%%post --erroronfail: a failing script fails its unit (systemctl status %s) but does not stop the boot", name)
	}
	t.leftover(at, "%post", &o, "")
}

// certificate writes a %certificate section's PEM where its --dir and
// --filename say, or, for --type anchor, where Anaconda puts trust anchors
// (/etc/pki/ca-trust/source/anchors/, pyanaconda/modules/security/
// certificates/installation.py).
func (t *translator) certificate(it item) {
	o := parseOpts(it.args)
	name, _ := o.str("--filename")
	dir, _ := o.str("--dir")
	typ, hasType := o.str("--type")
	switch {
	case hasType && typ != "anchor":
		t.rep.addSpan(sevError, it.at, it.end, "%%certificate --type=%s: only anchor is a known type; give --dir instead: not translated", typ)
		return
	case hasType && dir == "":
		dir = "/etc/pki/ca-trust/source/anchors"
	}
	if name == "" || dir == "" || !strings.HasPrefix(dir, "/") || strings.Contains(name, "/") {
		t.rep.addSpan(sevError, it.at, it.end, "%%certificate needs --filename and an absolute --dir (or --type anchor): not translated")
		return
	}
	t.file(it.at, path.Join(dir, name), 0o644, strings.Join(it.body, "\n")+"\n")
	t.rep.add(sevWarning, it.at, "%%certificate is written to %s; the system's trust store includes it only after update-ca-trust (or your distro's equivalent) runs", path.Join(dir, name))
	t.leftover(it.at, "%certificate", &o, "")
}

// ignition parses a %ignition section's config (JSON of any spec version up
// to the output's) to merge over the translation; its problems are
// reported at the kickstart lines they are on.
func (t *translator) ignition(it item) {
	at := it.at
	raw := []byte(strings.Join(it.body, "\n"))
	cfg, v, rep, err := config.ParseDeclared(raw)
	for _, e := range rep.Entries {
		where := at
		if e.Line > 0 {
			where.line = at.line + e.Line
		}
		msg := e.Message
		if e.Path != "" {
			msg = e.Path + ": " + msg
		}
		t.rep.add(e.Severity, where, "%%ignition: %s", msg)
	}
	if err != nil {
		t.rep.add(sevError, at, "%%ignition: the config is not merged (%v)", err)
		return
	}
	if !t.v.AtLeast(v) {
		t.rep.add(sevError, at, "%%ignition declares spec %s, newer than the output's %s: it is not merged; use -spec %s", v, t.v, v)
		return
	}
	t.ignAt = &at
	t.merges = append(t.merges, cfg)
	t.leftover(at, "%ignition", ptr(parseOpts(it.args)), "")
}
