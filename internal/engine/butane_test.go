package engine

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

// TestButaneConfigs checks that a Butane config is translated wherever a
// config is read at boot, as Ignition 2.27 does: the user config, a base
// config and a config named by ignition.config.merge.
func TestButaneConfigs(t *testing.T) {
	referenced := "variant: fcos\nversion: 1.4.0\nstorage:\n  files:\n    - path: /referenced\n"
	user := "variant: fcos\nversion: 1.5.0\nignition:\n  config:\n    merge:\n      - source: \"data:," + url.PathEscape(referenced) + "\"\n" +
		"storage:\n  files:\n    - path: /user\n      contents:\n        inline: hello\n"
	h := newHarness(t, "fetch-offline", serve(user))
	h.write("usr/lib/ignition/base.d/10-distro.bu", "variant: fcos\nversion: 1.0.0\nstorage:\n  files:\n    - path: /base\n")
	var got config.Config
	if err := run(context.Background(), h.opts, captureStages(&got)); err != nil {
		t.Fatalf("Run(fetch-offline) = %v", err)
	}
	if paths := strings.Join(filePaths(got), " "); paths != "/base /user /referenced" {
		t.Errorf("config files = %q, want /base /user /referenced", paths)
	}
	for _, f := range got.Storage.Files {
		if f.Path == "/user" && (f.Contents.Source == nil || *f.Contents.Source != "data:,hello") {
			t.Errorf("/user contents = %v, want data:,hello", f.Contents.Source)
		}
	}
	if !strings.Contains(h.logs.String(), "translated a Butane config") {
		t.Error("the log does not say a Butane config was translated")
	}
}

func TestButaneConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, config, want string
	}{
		{"local files are refused at boot", "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /a\n      contents:\n        local: a.txt\n",
			"cannot be translated at boot"},
		{"errors name the YAML line", "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: etc/a\n",
			"error at $.storage.files.0.path, line 5 col 13: path not absolute"},
		{"unknown versions", "variant: fcos\nversion: 2.0.0\n", "no translator exists for variant fcos with version 2.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, "fetch-offline", serve(tc.config))
			err := h.run("fetch-offline")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Butane config") {
				t.Fatalf("Run() = %v, want an error naming the Butane config and %q", err, tc.want)
			}
			if h.hasCache() {
				t.Error("a config that did not translate was cached")
			}
		})
	}
}
