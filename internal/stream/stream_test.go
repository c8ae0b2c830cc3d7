package stream

import (
	"strings"
	"testing"
)

const testStream = `{
  "stream": "testing",
  "architectures": {
    "x86_64": {"artifacts": {
      "metal": {"release": "40.1", "formats": {
        "raw.xz": {"disk": {"location": "https://example.com/metal.raw.xz", "signature": "https://example.com/metal.raw.xz.sig", "sha256": "aa"}},
        "4k.raw.xz": {"disk": {"location": "https://example.com/metal4k.raw.xz", "signature": "https://example.com/metal4k.raw.xz.sig"}},
        "iso": {"disk": {"location": "https://example.com/live.iso", "signature": "https://example.com/live.iso.sig"}},
        "pxe": {"kernel": {"location": "k", "signature": "k.sig"}, "initramfs": {"location": "i", "signature": "i.sig"}}
      }},
      "qemu": {"formats": {"qcow2.xz": {"disk": {"location": "q", "signature": "q.sig"}}}}
    }},
    "aarch64": {"artifacts": {"metal": {"formats": {"raw.xz": {"disk": {"location": "a", "signature": "a.sig"}}}}}}
  }
}`

func TestURL(t *testing.T) {
	for _, tc := range []struct{ name, base, want string }{
		{"stable", "", "https://builds.coreos.fedoraproject.org/streams/stable.json"},
		{"testing", "http://127.0.0.1:8080/streams/", "http://127.0.0.1:8080/streams/testing.json"},
		// Url::join semantics: the last segment of a base without a slash goes.
		{"next", "http://h/a/b", "http://h/a/next.json"},
	} {
		u, err := URL(tc.name, tc.base)
		if err != nil || u.String() != tc.want {
			t.Errorf("URL(%q, %q) = %v, %v, want %s", tc.name, tc.base, u, err, tc.want)
		}
	}
	if _, err := URL("stable", "not/absolute"); err == nil {
		t.Errorf("URL with a relative base = nil error, want one")
	}
}

func TestTable(t *testing.T) {
	s, err := Decode(strings.NewReader(testStream))
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"Architecture  Platform  Format\n" +
		"aarch64       metal     raw.xz\n" +
		"x86_64        metal     4k.raw.xz\n" +
		"x86_64        metal     iso\n" +
		"x86_64        metal     pxe\n" +
		"x86_64        metal     raw.xz\n" +
		"x86_64        qemu      qcow2.xz\n"
	if got := Table(s.Rows()); got != want {
		t.Errorf("Table() =\n%s\nwant\n%s", got, want)
	}
}

func TestArtifacts(t *testing.T) {
	s, err := Decode(strings.NewReader(testStream))
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Artifacts("x86_64", "metal", "4k.raw.xz")
	if err != nil || a["disk"].Location != "https://example.com/metal4k.raw.xz" || a["disk"].Signature != "https://example.com/metal4k.raw.xz.sig" {
		t.Errorf("Artifacts(x86_64, metal, 4k.raw.xz) = %v, %v", a, err)
	}
	for _, tc := range [][3]string{{"s390x", "metal", "raw.xz"}, {"x86_64", "azure", "raw.xz"}, {"x86_64", "metal", "vmdk"}} {
		want := "couldn't find architecture " + tc[0] + ", platform " + tc[1] + ", format " + tc[2] + " in stream metadata"
		if _, err := s.Artifacts(tc[0], tc[1], tc[2]); err == nil || err.Error() != want {
			t.Errorf("Artifacts(%v) = %v, want %q", tc, err, want)
		}
	}
}
