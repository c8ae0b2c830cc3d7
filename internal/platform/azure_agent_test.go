package platform

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWireServerAddress(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"networkd lease": {
			files: map[string]string{"run/systemd/netif/leases/2": "# This is private data.\nADDRESS=10.0.0.4\nOPTION_245=A83F8110\n"},
			want:  "http://168.63.129.16",
		},
		"networkd lease, other fabric": {
			files: map[string]string{
				"run/systemd/netif/leases/1": "ADDRESS=192.168.1.2\n",
				"run/systemd/netif/leases/3": "OPTION_245=0A000001\n",
			},
			want: "http://10.0.0.1",
		},
		"dhclient lease": {
			files: map[string]string{"var/lib/dhclient/dhclient--eth0.lease": "lease {\n  interface \"eth0\";\n  option unknown-245 a:d:e:f;\n}\n"},
			want:  "http://10.13.14.15",
		},
		"malformed option": {
			files: map[string]string{"run/systemd/netif/leases/2": "OPTION_245=A83F81\n"},
			want:  "http://168.63.129.16",
		},
		"no lease": {want: "http://168.63.129.16"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for p, content := range tc.files {
				p = filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			host := &Host{Env: Env{Root: root, Logger: slog.New(slog.DiscardHandler)}, ID: "azure"}
			if got := host.wireServer(context.Background()); got != tc.want {
				t.Errorf("wireServer() = %s, want %s", got, tc.want)
			}
		})
	}
}

// The description is text in the document, whatever the reason holds.
func TestHealthDocumentEscapes(t *testing.T) {
	doc := string(healthDocument(goalState{"1", "c&1", "i<1"}, "NotReady", &details{"ProvisioningFailed", `mode "0644" < 0o777 & </Description>`}))
	for _, want := range []string{"<ContainerId>c&amp;1</ContainerId>", "<InstanceId>i&lt;1</InstanceId>",
		"<Description>mode &#34;0644&#34; &lt; 0o777 &amp; &lt;/Description&gt;</Description>"} {
		if !strings.Contains(doc, want) {
			t.Errorf("health document lacks %s:\n%s", want, doc)
		}
	}
}
