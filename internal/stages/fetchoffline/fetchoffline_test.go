package fetchoffline

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

func parse(t *testing.T, raw string) config.Config {
	t.Helper()
	cfg, report, err := config.Parse([]byte(raw))
	if err != nil {
		t.Fatalf("config.Parse(%s) = %v\n%s", raw, err, report)
	}
	return cfg
}

func TestNeedsNetwork(t *testing.T) {
	tests := []struct {
		name string
		cfg  string
		want []Need
	}{
		{"empty", `{"ignition":{"version":"3.4.0"}}`, nil},
		{"data and no source", `{"ignition":{"version":"3.4.0"},"storage":{"files":[
			{"path":"/a","contents":{"source":"data:,hello"}},
			{"path":"/c"}]}}`, nil},
		{"remote file contents and append", `{"ignition":{"version":"3.4.0"},"storage":{"files":[
			{"path":"/a","contents":{"source":"data:,hello"}},
			{"path":"/b","contents":{"source":"https://example.com/b?token=secret"},"append":[{"source":"data:,x"},{"source":"tftp://10.0.0.1/c"}]}]}}`,
			[]Need{{"$.storage.files.1.append.1", "fetched with tftp"}, {"$.storage.files.1.contents", "fetched with https"}}},
		{"remote CA", `{"ignition":{"version":"3.4.0","security":{"tls":{"certificateAuthorities":[{"source":"s3://bucket/ca.pem"}]}}}}`,
			[]Need{{"$.ignition.security.tls.certificateAuthorities.0", "fetched with s3"}}},
		{"merge with a data URL needs nothing", `{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"data:,%7B%7D"}]}}}`, nil},
		{"luks key file and tang", `{"ignition":{"version":"3.4.0"},"storage":{"luks":[
			{"name":"a","device":"/dev/vdb","keyFile":{"source":"gs://b/key"}},
			{"name":"b","device":"/dev/vdc","clevis":{"tang":[{"url":"http://tang","thumbprint":"x"},{"url":"http://tang2","thumbprint":"y","advertisement":"{\"payload\":\"x\",\"protected\":\"y\",\"signature\":\"z\"}"}]}},
			{"name":"c","device":"/dev/vdd","clevis":{"custom":{"pin":"sss","config":"{}","needsNetwork":true}}}]}}`,
			[]Need{
				{"$.storage.luks.0.keyFile", "fetched with gs"},
				{"$.storage.luks.1.clevis.tang.0", "tang server without an advertisement"},
				{"$.storage.luks.2.clevis.custom", "custom clevis pin that needs the network"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NeedsNetwork(parse(t, tt.cfg))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NeedsNetwork() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRun(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	offline := parse(t, `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a","contents":{"source":"data:,hello"}}]}}`)
	if err := Run(context.Background(), Deps{Config: offline, Logger: log}); err != nil {
		t.Errorf("Run(offline config) = %v, want nil", err)
	}
	remote := parse(t, `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a","contents":{"source":"https://user:pw@example.com/a?sig=secret"}}]}}`)
	err := Run(context.Background(), Deps{Config: remote, Logger: log})
	if !errors.Is(err, resource.ErrNeedNet) {
		t.Fatalf("Run(remote config) = %v, want resource.ErrNeedNet", err)
	}
	if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "pw") || !strings.Contains(err.Error(), "$.storage.files.0.contents") {
		t.Errorf("Run(remote config) = %q, want the path and no secret", err)
	}
}
