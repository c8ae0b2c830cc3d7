package config

import (
	"reflect"
	"strings"
	"testing"
)

// secretConfig holds a secret, each marked SECRET-<where>, in every place
// Redacted must hide one, next to values that must stay visible.
func secretConfig() Config {
	header := func(where string) []HTTPHeader {
		return []HTTPHeader{{Name: "Authorization", Value: new("Bearer SECRET-" + where)}, {Name: "X-Removed"}}
	}
	return Config{
		Ignition: Ignition{
			Version: "3.7.0-experimental",
			Config: IgnitionConfig{
				Merge: []Resource{
					{Source: new("https://user:SECRET-merge-password@config.example/a.ign"), HTTPHeaders: header("merge")},
					{Source: new("data:,%7B%22passwd%22%3A%22SECRET-merge-data%22%7D")},
					{Source: new("https://SECRET-merge-token@config.example/b.ign")},
				},
				Replace: Resource{Source: new("https://config.example/r.ign?sig=SECRET-replace-query#SECRET-fragment"), HTTPHeaders: header("replace")},
			},
			Proxy: Proxy{
				HTTPProxy:  new("http://proxyuser:SECRET-proxy-password@proxy.example:3128"),
				HTTPSProxy: new("proxyuser:SECRET-proxy-bare@proxy.example:3128"),
				NoProxy:    []string{"internal.example"},
			},
			Security: Security{TLS: TLS{CertificateAuthorities: []Resource{
				{Source: new("https://ca.example/ca.pem"), HTTPHeaders: header("ca")},
			}}},
		},
		KernelArguments: KernelArguments{ShouldExist: []string{"console=ttyS0"}},
		Passwd: Passwd{
			Users: []PasswdUser{{
				Name:              "core",
				PasswordHash:      new("$6$SECRET-user-hash"),
				SSHAuthorizedKeys: []string{"ssh-ed25519 AAAApublic core@example"},
			}},
			Groups: []PasswdGroup{{Name: "admins", PasswordHash: new("$6$SECRET-group-hash")}},
		},
		Storage: Storage{
			Luks: []Luks{{
				Name:   "root",
				Device: new("/dev/disk/by-partlabel/root"),
				KeyFile: Resource{
					Source:       new("https://keys.example/SECRET-keyfile-path"),
					Verification: Verification{Hash: new("sha512-SECRET-keyfile-hash")},
					HTTPHeaders:  header("keyfile"),
				},
				Clevis: Clevis{
					Custom: ClevisCustom{Pin: new("sss"), Config: new(`{"t":1,"SECRET-clevis":{}}`)},
					Tang:   []Tang{{URL: "http://tang:SECRET-tang-password@tang.example", Thumbprint: new("thumb-public"), Advertisement: new(`{"payload":"adv-public"}`)}},
				},
			}, {
				Name:    "data",
				KeyFile: Resource{Source: new("data:,SECRET-keyfile-data")},
			}},
			Files: []File{{
				Node:     Node{Path: "/etc/secret.conf"},
				Contents: Resource{Source: new("data:;base64,U0VDUkVULWJhc2U2NA=="), HTTPHeaders: header("contents")},
				Append:   []Resource{{Source: new("data:,SECRET-append")}, {Source: new("https://files.example/append.txt"), HTTPHeaders: header("append")}},
				Mode:     new(0o600),
			}, {
				Node:     Node{Path: "/etc/motd"},
				Contents: Resource{Source: new("https://files.example/motd"), Verification: Verification{Hash: new("sha512-0123abcd")}},
			}},
		},
		Systemd: Systemd{Units: []Unit{{
			Name:     "app.service",
			Contents: new("[Service]\nEnvironment=TOKEN=SECRET-unit\n"),
			Dropins:  []Dropin{{Name: "10-env.conf", Contents: new("[Service]\nEnvironment=KEY=SECRET-dropin\n")}},
		}}},
	}
}

func TestRenderRedactedHidesEverySecret(t *testing.T) {
	in := secretConfig()
	out, err := RenderRedacted(in)
	if err != nil {
		t.Fatalf("RenderRedacted(secretConfig()) error %v", err)
	}
	got := string(out)
	for _, secret := range []string{"SECRET", "U0VDUkVU"} {
		if strings.Contains(got, secret) {
			t.Errorf("RenderRedacted(secretConfig()) = %s, want no %q in it", got, secret)
		}
	}
	if !reflect.DeepEqual(in, secretConfig()) {
		t.Errorf("RenderRedacted(secretConfig()) changed its argument to %s", configJSON(in))
	}
}

func TestRenderRedactedKeepsPublicValues(t *testing.T) {
	out, err := RenderRedacted(secretConfig())
	if err != nil {
		t.Fatalf("RenderRedacted(secretConfig()) error %v", err)
	}
	got := string(out)
	for _, want := range []string{
		`"version": "3.7.0-experimental"`,
		`"source": "https://REDACTED@config.example/a.ign"`,
		`"source": "https://config.example/r.ign?REDACTED#REDACTED"`,
		`"source": "https://ca.example/ca.pem"`,
		`"source": "https://files.example/append.txt"`,
		`"source": "https://files.example/motd"`,
		`"hash": "sha512-0123abcd"`,
		`"httpProxy": "http://REDACTED@proxy.example:3128"`,
		`"internal.example"`,
		`"name": "Authorization"`,
		`"name": "X-Removed"`,
		`"name": "core"`,
		`"passwordHash": "REDACTED"`,
		`"ssh-ed25519 AAAApublic core@example"`,
		`"name": "admins"`,
		`"device": "/dev/disk/by-partlabel/root"`,
		`"pin": "sss"`,
		`"url": "http://REDACTED@tang.example"`,
		`"thumbprint": "thumb-public"`,
		`adv-public`,
		`"path": "/etc/secret.conf"`,
		`"mode": 384`,
		`"name": "app.service"`,
		`"name": "10-env.conf"`,
		`"console=ttyS0"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("RenderRedacted(secretConfig()) = %s, want %s in it", got, want)
		}
	}
}

func TestRedacted(t *testing.T) {
	tests := []struct {
		name string
		in   Config
		want Config
	}{
		{
			name: "absent secrets stay absent",
			in:   Config{Passwd: Passwd{Users: []PasswdUser{{Name: "core"}}}, Systemd: Systemd{Units: []Unit{{Name: "a.service", Enabled: new(true)}}}},
			want: Config{Passwd: Passwd{Users: []PasswdUser{{Name: "core"}}}, Systemd: Systemd{Units: []Unit{{Name: "a.service", Enabled: new(true)}}}},
		},
		{
			name: "empty secrets are hidden too",
			in:   Config{Passwd: Passwd{Users: []PasswdUser{{Name: "core", PasswordHash: new("")}}}},
			want: Config{Passwd: Passwd{Users: []PasswdUser{{Name: "core", PasswordHash: new(RedactedMarker)}}}},
		},
		{
			name: "LUKS key file hidden whole but for header names and compression",
			in: Config{Storage: Storage{Luks: []Luks{{Name: "l", KeyFile: Resource{
				Source: new("https://k.example/key"), Compression: new("gzip"),
				Verification: Verification{Hash: new("sha512-ab")}, HTTPHeaders: []HTTPHeader{{Name: "A", Value: new("v")}},
			}}}}},
			want: Config{Storage: Storage{Luks: []Luks{{Name: "l", KeyFile: Resource{
				Source: new(RedactedMarker), Compression: new("gzip"),
				Verification: Verification{Hash: new(RedactedMarker)}, HTTPHeaders: []HTTPHeader{{Name: "A", Value: new(RedactedMarker)}},
			}}}}},
		},
		{
			name: "data URL config reference hidden, plain URL kept",
			in:   Config{Ignition: Ignition{Config: IgnitionConfig{Merge: []Resource{{Source: new("DATA:,x")}, {Source: new("tftp://boot.example/c.ign")}}}}},
			want: Config{Ignition: Ignition{Config: IgnitionConfig{Merge: []Resource{{Source: new(RedactedMarker)}, {Source: new("tftp://boot.example/c.ign")}}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Redacted(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Redacted(%s) = %s, want %s", configJSON(tt.in), configJSON(got), configJSON(tt.want))
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"https://example.com/config.ign", "https://example.com/config.ign"},
		{"s3://bucket/key", "s3://bucket/key"},
		{"arn:aws:s3:::bucket/key", "arn:aws:s3:::bucket/key"},
		{"gs://bucket/key", "gs://bucket/key"},
		{"https://user:pw@example.com/x", "https://REDACTED@example.com/x"},
		{"https://token@example.com/x", "https://REDACTED@example.com/x"},
		{"https://example.com/x?X-Amz-Signature=abc&X-Amz-Credential=def", "https://example.com/x?REDACTED"},
		{"https://example.com/x?", "https://example.com/x?REDACTED"},
		{"https://example.com/x#frag", "https://example.com/x#REDACTED"},
		{"data:,hello", RedactedMarker},
		{"Data:text/plain;base64,aGk=", RedactedMarker},
		{"user:pw@proxy.example:3128", RedactedMarker},
		{"http://[::1", RedactedMarker},
	}
	for _, tt := range tests {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRenderRedactedOmitsEmptyFields(t *testing.T) {
	in := Config{
		Ignition: Ignition{Version: "3.7.0-experimental"},
		Storage:  Storage{Disks: []Disk{{Device: "/dev/vda", Partitions: []Partition{{}}}}},
	}
	got, err := RenderRedacted(in)
	if err != nil {
		t.Fatalf("RenderRedacted(%s) error %v", configJSON(in), err)
	}
	want := `{
  "ignition": {
    "version": "3.7.0-experimental"
  },
  "storage": {
    "disks": [
      {
        "device": "/dev/vda",
        "partitions": [
          {}
        ]
      }
    ]
  }
}`
	if string(got) != want {
		t.Errorf("RenderRedacted(%s) = %s, want %s", configJSON(in), got, want)
	}
}

// A config without secrets renders to JSON that parses back to the same
// config: rendering loses nothing.
func TestRenderRedactedRoundTrip(t *testing.T) {
	in := Config{
		Ignition: Ignition{
			Version: "3.7.0-experimental",
			Config:  IgnitionConfig{Merge: []Resource{{Source: new("https://example.com/a&b.ign"), Compression: new("gzip")}}},
			Proxy:   Proxy{HTTPSProxy: new("https://proxy.example:3128"), NoProxy: []string{".internal"}},
		},
		Passwd: Passwd{Users: []PasswdUser{{Name: "core", UID: new(1000), NoCreateHome: new(false)}}},
		Storage: Storage{
			Disks: []Disk{{Device: "/dev/vda", WipeTable: new(false), Partitions: []Partition{{Number: 4, Label: new("root"), SizeMiB: new(0)}}}},
			Files: []File{{Node: Node{Path: "/etc/motd", Overwrite: new(true)}, Contents: Resource{Source: new("https://files.example/motd")}, Mode: new(0o644)}},
		},
		Systemd: Systemd{Units: []Unit{{Name: "a.service", Enabled: new(true)}}},
	}
	out, err := RenderRedacted(in)
	if err != nil {
		t.Fatalf("RenderRedacted(%s) error %v", configJSON(in), err)
	}
	got, r, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(RenderRedacted(in)) error %v\n%s\n%s", err, r, out)
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("Parse(RenderRedacted(in)) = %s, want %s", configJSON(got), configJSON(in))
	}
}

// stuffResources fills every list in v with one entry and every resource
// with a data URL and a header value that are secret, walking the model the
// way Redacted does, so a resource field added to types.go is covered here
// without changes.
func stuffResources(v reflect.Value) {
	switch v.Kind() {
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		stuffResources(v.Index(0))
	case reflect.Struct:
		if res, ok := v.Addr().Interface().(*Resource); ok {
			res.Source = new("data:,SECRET-stuffed")
			res.HTTPHeaders = []HTTPHeader{{Name: "Authorization", Value: new("SECRET-stuffed")}}
			return
		}
		for i := range v.NumField() {
			stuffResources(v.Field(i))
		}
	}
}

func TestRedactedCoversEveryResource(t *testing.T) {
	var in Config
	stuffResources(reflect.ValueOf(&in).Elem())
	out, err := RenderRedacted(in)
	if err != nil {
		t.Fatalf("RenderRedacted(%s) error %v", configJSON(in), err)
	}
	if n := strings.Count(configJSON(in), "SECRET-stuffed"); n < 12 {
		t.Fatalf("stuffResources filled %d secrets, want a source and a header value in each of the 6 resources (12)", n)
	}
	if strings.Contains(string(out), "SECRET") {
		t.Errorf("RenderRedacted(%s) = %s, want no SECRET in it", configJSON(in), out)
	}
}

// TestRedactTablesMatchModel makes sure the field tables name real fields
// of the kinds hide and hideURLSecrets handle, so a renamed field cannot
// silently stop being redacted.
func TestRedactTablesMatchModel(t *testing.T) {
	stringPtr, resource := reflect.TypeFor[*string](), reflect.TypeFor[Resource]()
	for f := range secretFields {
		sf, ok := f.in.FieldByName(f.name)
		switch {
		case !ok:
			t.Errorf("secretFields names %s.%s, which is not in the model", f.in.Name(), f.name)
		case sf.Type != stringPtr && sf.Type != resource:
			t.Errorf("secretFields names %s.%s, a %s: hide handles only *string and Resource", f.in.Name(), f.name, sf.Type)
		}
	}
	for f := range urlFields {
		sf, ok := f.in.FieldByName(f.name)
		switch {
		case !ok:
			t.Errorf("urlFields names %s.%s, which is not in the model", f.in.Name(), f.name)
		case sf.Type != stringPtr && sf.Type.Kind() != reflect.String:
			t.Errorf("urlFields names %s.%s, a %s: hideURLSecrets handles only string and *string", f.in.Name(), f.name, sf.Type)
		}
	}
}
