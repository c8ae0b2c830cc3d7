package cloudconfig

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
)

// maxUserData bounds user-data after decompression: cloud-init's own
// limit on what it reads from a datasource is far lower, and a config
// holding more would not be one a person reviews.
const maxUserData = 16 << 20

// A part is one piece of user-data: a cloud-config document, a script, or
// something else to report. name locates it in reports.
type part struct {
	name string
	kind string // partCloudConfig, partScript, or what cloud-init calls it
	data []byte
}

const (
	partCloudConfig = "text/cloud-config"
	partScript      = "text/x-shellscript"
	partArchive     = "text/cloud-config-archive"
)

// The first line of each kind of user-data cloud-init recognises
// (cloudinit/handlers/__init__.py, INCLUSION_TYPES_MAP), longest first
// where one starts with another.
var starts = []struct{ prefix, kind string }{
	{"#cloud-config-archive", partArchive},
	{"#cloud-config-jsonp", "text/cloud-config-jsonp"},
	{"#cloud-config", partCloudConfig},
	{"#!", partScript},
	{"#include-once", "text/x-include-once-url"},
	{"#include", "text/x-include-url"},
	{"#cloud-boothook", "text/cloud-boothook"},
	{"#part-handler", "text/part-handler"},
	{"## template: jinja", "text/jinja2"},
}

// kindOf names the kind of a document by its first line; "" when it is
// none cloud-init knows.
func kindOf(data []byte) string {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for _, s := range starts {
		if bytes.HasPrefix(data, []byte(s.prefix)) {
			return s.kind
		}
	}
	return ""
}

// gunzip decompresses gzip'd user-data (cloud-init accepts it,
// cloudinit/user_data.py, util.decomp_gzip), up to maxUserData.
func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("gzip'd user-data: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxUserData+1))
	if err != nil {
		return nil, fmt.Errorf("gzip'd user-data: %w", err)
	}
	if len(out) > maxUserData {
		return nil, fmt.Errorf("gzip'd user-data: more than %d bytes", maxUserData)
	}
	return out, nil
}

// isMIME reports user-data that starts with mail headers.
func isMIME(data []byte) bool {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	l := strings.ToLower(string(line))
	return strings.HasPrefix(l, "content-type:") || strings.HasPrefix(l, "mime-version:")
}

// split turns user-data into its parts: itself when it is one document, or
// the parts of a MIME multipart message (nested ones too).
func split(name string, data []byte) ([]part, error) {
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		var err error
		if data, err = gunzip(data); err != nil {
			return nil, err
		}
	}
	if isMIME(data) {
		return splitMIME(name, data)
	}
	k := kindOf(data)
	if k == "" {
		return nil, fmt.Errorf("%s: %w: it starts neither with #cloud-config nor with MIME headers", name, ErrNotUserData)
	}
	return []part{{name: name, kind: k, data: data}}, nil
}

// splitMIME reads a MIME message (RFC 2045, 2046) as cloud-init's
// user_data.py does: each leaf part is a document of its Content-Type, or,
// for text/plain and text/x-not-multipart, of the kind its first line
// says.
func splitMIME(name string, data []byte) ([]part, error) {
	msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: MIME user-data: %w", name, err)
	}
	var out []part
	err = walkMIME(name, textproto(msg.Header), msg.Body, &out, 0)
	return out, err
}

// textproto gives a mail header the shape multipart parts have.
func textproto(h mail.Header) map[string][]string { return h }

// walkMIME appends the leaf parts of one MIME entity.
func walkMIME(name string, header map[string][]string, body io.Reader, out *[]part, depth int) error {
	if depth > 8 {
		return fmt.Errorf("%s: MIME parts nested more than 8 deep", name)
	}
	get := func(k string) string {
		if v := header[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	mt, params, err := mime.ParseMediaType(get("Content-Type"))
	if err != nil {
		mt = "text/plain"
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for i := 1; ; i++ {
			p, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: MIME part %d: %w", name, i, err)
			}
			pname := fmt.Sprintf("%s part %d", name, len(*out)+1)
			if fn := p.FileName(); fn != "" {
				pname += " (" + fn + ")"
			}
			if err := walkMIME(pname, p.Header, p, out, depth+1); err != nil {
				return err
			}
		}
	}
	raw, err := io.ReadAll(io.LimitReader(body, maxUserData+1))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	switch strings.ToLower(get("Content-Transfer-Encoding")) {
	case "base64":
		dec, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(raw)), ""))
		if err != nil {
			return fmt.Errorf("%s: base64 body: %w", name, err)
		}
		raw = dec
	case "quoted-printable":
		dec, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
		if err != nil {
			return fmt.Errorf("%s: quoted-printable body: %w", name, err)
		}
		raw = dec
	}
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		if raw, err = gunzip(raw); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if mt == "text/plain" || mt == "text/x-not-multipart" {
		if k := kindOf(raw); k != "" {
			mt = k
		}
	}
	*out = append(*out, part{name: name, kind: mt, data: raw})
	return nil
}
