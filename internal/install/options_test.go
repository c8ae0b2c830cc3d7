package install

import (
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	files := map[string]string{
		"a.yaml":        "dest-device: /dev/vdb\nimage-url: https://example.com/os.raw.xz\nappend-karg: [a=1, b]\ninsecure: true\nfetch-retries: 3\n",
		"b.yaml":        "dest-device: /dev/vdc\nappend-karg:\n  - c\n",
		"bad-key.yaml":  "dest-devise: /dev/vdb\n",
		"bad-bool.yaml": "insecure: yes please\n",
		"nested.yaml":   "config-file: a.yaml\n",
	}
	read := func(name string) ([]byte, error) {
		s, ok := files[name]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return []byte(s), nil
	}
	tests := []struct {
		args    []string
		want    Options
		wantErr string
	}{
		{
			args: []string{"-i", "c.ign", "/dev/sda", "--image-file", "os.raw", "--append-karg", "x", "--append-karg=y", "-n", "--fetch-retries", "infinite"},
			want: Options{Dest: "/dev/sda", IgnitionFile: "c.ign", ImageFile: "os.raw", AppendKargs: []string{"x", "y"}, CopyNetwork: true,
				FetchRetries: Infinite, NetworkDir: DefaultNetworkDir},
		},
		{
			// config files come first, in order; the command line wins for
			// single values and adds to lists
			args: []string{"-c", "a.yaml", "--config-file", "b.yaml", "--append-karg", "d", "-I", "https://example.com/c.ign"},
			want: Options{Dest: "/dev/vdc", ImageURL: "https://example.com/os.raw.xz", IgnitionURL: "https://example.com/c.ign",
				AppendKargs: []string{"a=1", "b", "c", "d"}, Insecure: true, FetchRetries: 3, NetworkDir: DefaultNetworkDir},
		},
		{args: []string{"-c", "a.yaml", "/dev/vdz"}, wantErr: "more than one destination"},
		{args: []string{"-c", "bad-key.yaml"}, wantErr: `unknown option "dest-devise"`},
		{args: []string{"-c", "bad-bool.yaml"}, wantErr: "is true or false"},
		{args: []string{"-c", "nested.yaml"}, wantErr: "cannot be set in a config file"},
		{args: []string{"-c", "missing.yaml"}, wantErr: "config file missing.yaml"},
		{args: []string{"-f", "x"}, wantErr: "no destination disk"},
		{args: []string{"/dev/sda"}, wantErr: "no image given"},
		{args: []string{"-f", "x", "-u", "https://h/x", "/dev/sda"}, wantErr: "exclude each other"},
		{args: []string{"-f", "x", "-i", "a", "-I", "https://h/x", "/dev/sda"}, wantErr: "exclude each other"},
		{args: []string{"-f", "x", "--image-hash", "md5-00", "/dev/sda"}, wantErr: "unknown hash type"},
		{args: []string{"-f", "x", "--save-partindex", "0", "/dev/sda"}, wantErr: "cannot be zero"},
		{args: []string{"-f", "x", "--console", "/dev/ttyS0", "/dev/sda"}, wantErr: "should not start with"},
		{args: []string{"-f", "x", "--fetch-retries", "-1", "/dev/sda"}, wantErr: "not a count"},
	}
	for _, tt := range tests {
		got, err := ParseArgs(tt.args, read)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseArgs(%q) = error %v, want one containing %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseArgs(%q) = error %v", tt.args, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseArgs(%q) = %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

func TestSigLocation(t *testing.T) {
	tests := []struct {
		o    Options
		want string
	}{
		{Options{ImageFile: "/srv/os.raw.xz"}, "/srv/os.raw.xz.sig"},
		{Options{ImageURL: "https://h/os.raw.xz"}, "https://h/os.raw.xz.sig"},
		{Options{ImageURL: "https://h/os.raw.xz?token=1"}, "https://h/os.raw.xz.sig?token=1"},
		{Options{ImageURL: "https://h/os.raw.xz", ImageSig: "/tmp/s"}, "/tmp/s"},
	}
	for _, tt := range tests {
		if got := tt.o.sigLocation(); got != tt.want {
			t.Errorf("sigLocation(%+v) = %q, want %q", tt.o, got, tt.want)
		}
	}
}

func TestParseDigest(t *testing.T) {
	good := "sha512-cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
	d, err := ParseDigest(good)
	if err != nil || d.String() != good {
		t.Fatalf("ParseDigest(%q) = %v, %v", good, d, err)
	}
	h := d.New()
	if err := d.Check(h.Sum(nil)); err != nil {
		t.Errorf("the empty input's sha512 does not check: %v", err)
	}
	if err := d.Check(make([]byte, 64)); !errors.Is(err, ErrDigestMismatch) {
		t.Errorf("Check(zeros) = %v, want ErrDigestMismatch", err)
	}
	// coreos-installer's bad cases (src/io/hash.rs)
	for _, bad := range []string{"", "foo-bar", "-bar", "sha512", "sha512-", "sha512-00", "sha256-zz"} {
		if _, err := ParseDigest(bad); err == nil {
			t.Errorf("ParseDigest(%q) accepted", bad)
		}
	}
}

func TestParseFilters(t *testing.T) {
	got, err := ParseFilters([]string{"foo", "z*b?", ""}, []string{"1", "7-7", "2-4", "-3", "4-"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Filter{{Glob: "foo"}, {Glob: "z*b?"}, {Glob: ""}, {From: 1, To: 1}, {From: 7, To: 7}, {From: 2, To: 4}, {To: 3}, {From: 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseFilters = %+v, want %+v", got, want)
	}
	// coreos-installer's bad ranges (src/install.rs, test_parse_partition_filters)
	for r, msg := range map[string]string{
		"": "cannot be open", "-": "cannot be open", "--": "couldn't parse partition index range",
		"0": "cannot be zero", "-2-3": "couldn't parse partition index range", "23q": "couldn't parse partition index",
		"23-45.7": "couldn't parse partition index", "0x7": "couldn't parse partition index", "9-7": "cannot be greater",
	} {
		if _, err := ParseFilters(nil, []string{"7-", r, "34"}); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseFilters(%q) = %v, want an error with %q", r, err, msg)
		}
	}
	if _, err := ParseFilters([]string{"[a"}, nil); err == nil {
		t.Errorf("ParseFilters accepted the glob [a")
	}
}

// TestExampleConfigFile reads the example options file a package installs
// (examples/installer-config.yaml): every key must be an option, and each
// must come out as the file's comments say.
func TestExampleConfigFile(t *testing.T) {
	const name = "../../examples/installer-config.yaml"
	got, err := ParseArgs([]string{"-c", name}, nil)
	if err != nil {
		t.Fatalf("ParseArgs(-c %s) = error %v", name, err)
	}
	want := Options{
		Dest:          "/dev/disk/by-id/virtio-root",
		ImageURL:      "https://images.example.com/os/42/os-metal.x86_64.raw.xz",
		ImageHash:     "sha256-8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4",
		IgnitionURL:   "https://provision.example.com/configs/node.ign",
		IgnitionHash:  "sha512-cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
		Platform:      "metal",
		Console:       []string{"tty0", "ttyS0,115200n8"},
		AppendKargs:   []string{"nosmt"},
		DeleteKargs:   []string{"quiet"},
		FirstbootArgs: "ip=dhcp",
		SaveLabels:    []string{"data*"},
		SaveIndexes:   []string{"5-"},
		FetchRetries:  3,
		CopyNetwork:   true,
		NetworkDir:    DefaultNetworkDir,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseArgs(-c %s) = %+v, want %+v", name, got, want)
	}
}
