package butane

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

var variantLine = regexp.MustCompile(`(?m)^variant: (\S+)$`)

// TestModelIsTheParsedConfig: the model a translation hands on is the
// config config.Parse reads from its JSON, for every example at every
// variant and version that translates it (the openshift variant raw, as at
// boot), so a reader at boot can take the model instead of parsing the
// JSON again. Beside the examples: what the upgrade from old versions
// changes (special mode bits before 3.6), and empty lists.
func TestModelIsTheParsedConfig(t *testing.T) {
	bus, err := filepath.Glob("testdata/examples/*.bu")
	if err != nil || len(bus) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	srcs := map[string][]byte{
		"special modes": []byte("variant: fcos\nversion: 1.0.0\nstorage:\n  files:\n    - path: /usr/local/bin/s\n      mode: 04755\n  directories:\n    - path: /srv/t\n      mode: 01777\n"),
		"empty lists":   []byte("variant: fcos\nversion: 1.5.0\npasswd:\n  users: []\nstorage:\n  files: []\n  links:\n    - path: /l\n      target: /t\nsystemd:\n  units:\n    - name: a.service\n      dropins: []\n"),
	}
	for _, bu := range bus {
		src, err := os.ReadFile(bu)
		if err != nil {
			t.Fatal(err)
		}
		srcs[strings.TrimSuffix(filepath.Base(bu), ".bu")] = src
	}
	n := 0
	for name, src := range srcs {
		for _, p := range profiles {
			in := versionLine.ReplaceAll(src, []byte("version: "+p.version))
			in = variantLine.ReplaceAll(in, []byte("variant: "+p.variant))
			res, err := Translate(in, Options{FilesDir: "testdata/files", Raw: true})
			if err != nil {
				continue // examples that need what this version lacks
			}
			want, _, err := config.Parse(res.Config)
			if err != nil {
				t.Fatalf("%s at %s %s: Parse(Config) = %v", name, p.variant, p.version, err)
			}
			if !reflect.DeepEqual(res.Model, want) {
				t.Errorf("%s at %s %s: Model = %+v\nwant the parsed Config %+v", name, p.variant, p.version, res.Model, want)
			}
			n++
		}
	}
	if n < len(srcs) {
		t.Fatal("no example translated")
	}
	t.Logf("%d translations", n)
}
