package butane

import (
	"path"
	"strings"

	"github.com/flintboot/flint/config"
)

// quadlet is one systemd.quadlets entry (base/v0_8_exp): a Podman Quadlet
// file, written where Podman's systemd generator reads it, with drop-ins.
type quadlet struct {
	Contents      *string         `json:"contents"`
	ContentsLocal *string         `json:"contentsLocal"`
	Name          string          `json:"name"`
	Rootful       bool            `json:"rootful"`
	Dropins       []config.Dropin `json:"dropins"`
}

type quadletReq struct {
	q  quadlet
	yp string
}

// quadletPath is where Podman reads a quadlet: /etc/containers/systemd for
// root's, /etc/containers/systemd/users for every user's
// (podman-systemd.unit(5)).
func quadletPath(rootful bool, name string) string {
	if rootful {
		return path.Join("/etc/containers/systemd", name)
	}
	return path.Join("/etc/containers/systemd/users", name)
}

// templateOf returns, for a template instance (foo@100.container), its
// template (foo@.container).
func templateOf(name string) (string, bool) {
	at := strings.IndexByte(name, '@')
	dot := strings.LastIndexByte(name, '.')
	if at < 0 || dot < 0 || at+1 == dot {
		return "", false
	}
	return name[:at] + "@." + name[dot+1:], true
}

// quadletExtensions are the unit types podman-systemd.unit(5) knows.
var quadletExtensions = []string{".container", ".volume", ".network", ".kube", ".image", ".build", ".pod", ".artifact"}

// validateQuadlets is Butane's Quadlet.Validate.
func (t *translator) validateQuadlets() {
	sv := config.SeverityError
	for _, req := range t.quadlets {
		q := req.q
		known := false
		for _, ext := range quadletExtensions {
			known = known || strings.HasSuffix(q.Name, ext)
		}
		if !known {
			t.add(sv, t.at(req.yp+".name"), "unsupported file extension for quadlet: must be one of .container, .volume, .network, .kube, .image, .build, .pod, or .artifact")
			continue
		}
		if _, instance := templateOf(q.Name); instance {
			if q.Contents != nil {
				t.add(sv, t.at(req.yp+".contents"), "template instances cannot have contents or contents_local")
			}
			if q.ContentsLocal != nil {
				t.add(sv, t.at(req.yp+".contents_local"), "template instances cannot have contents or contents_local")
			}
		} else if q.Contents != nil && q.ContentsLocal != nil {
			t.add(sv, t.at(req.yp+".contents_local"), "only one of the following can be set: contents, contents_local")
		}
	}
}

// processQuadlets writes each quadlet as a file (mode 0644), a template
// instance as a link to its template, and drop-ins as files in NAME.d
// (Butane's base/v0_8_exp processQuadlets). A path the config already has
// is an error.
func (t *translator) processQuadlets() {
	if len(t.quadlets) == 0 {
		return
	}
	n := t.indexNodes()
	st := &t.cfg.Storage
	exists := "matching filesystem node has existing contents or different type"
	addFile := func(dest string, local, inline *string, yp string) {
		if n.exists(dest) {
			t.add(config.SeverityError, t.at(yp), exists)
			return
		}
		var contents []byte
		cp := t.at(yp)
		if local != nil && *local != "" {
			cp = t.at(yp + ".contents_local")
			b, err := t.readLocal(*local)
			if err != nil {
				t.add(config.SeverityError, cp, err.Error())
				return
			}
			contents = b
		}
		if inline != nil && *inline != "" {
			cp = t.at(yp + ".contents")
			contents = []byte(*inline)
		}
		i := len(st.Files)
		src, compression := t.urls.make(contents, nil)
		st.Files = append(st.Files, config.File{Node: config.Node{Path: dest},
			Contents: config.Resource{Source: &src, Compression: compression}, Mode: intPtr(0o644)})
		n.files[dest] = i
		fp := t.added("$.storage.files", i, t.at(yp), t.at(yp))
		t.dec.jsonSrc.set(fp+".path", t.at(yp+".name"))
		t.dec.jsonSrc.set(fp+".contents", cp)
		t.dec.jsonSrc.set(fp+".contents.source", cp)
	}
	for _, req := range t.quadlets {
		q := req.q
		dest := quadletPath(q.Rootful, q.Name)
		if template, instance := templateOf(q.Name); instance {
			if n.exists(dest) {
				t.add(config.SeverityError, t.at(req.yp), exists)
			} else {
				i := len(st.Links)
				st.Links = append(st.Links, config.Link{Node: config.Node{Path: dest}, Target: strPtr(template)})
				n.links[dest] = i
				lp := t.added("$.storage.links", i, t.at(req.yp), t.at(req.yp))
				t.dec.jsonSrc.set(lp+".path", t.at(req.yp+".name"))
			}
		} else {
			addFile(dest, q.ContentsLocal, q.Contents, req.yp)
		}
		for i, d := range q.Dropins {
			// The drop-in's contents_local was read while decoding.
			addFile(dest+".d/"+d.Name, nil, d.Contents, idx(req.yp+".dropins", i))
		}
	}
}
