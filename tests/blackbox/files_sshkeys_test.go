//go:build linux

package blackbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/flintboot/flint/config"
)

// buildFragmentOff builds flint as a distro whose sshd reads no
// authorized_keys.d would (make AUTHORIZED_KEYS_FRAGMENT=false), beside
// the default build.
var buildFragmentOff = sync.OnceValues(func() (string, error) {
	if os.Getenv("FLINT_BLACKBOX_FLINT") != "" {
		return "", errors.New("FLINT_BLACKBOX_FLINT names a prebuilt binary: no build with other settings here")
	}
	def, err := build()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(filepath.Dir(def), "flint-keys-file")
	cmd := exec.Command("go", "build", "-tags", "nethttpomithttp2", "-trimpath",
		"-ldflags", "-X main.authorizedKeysFragment=false", "-o", bin, "./cmd/flint")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", errors.New("go build -X main.authorizedKeysFragment=false: " + err.Error() + "\n" + string(out))
	}
	return bin, nil
})

// TestFilesAuthorizedKeysFile runs the files stages with the SSH keys
// going to ~/.ssh/authorized_keys, chosen at build time
// (-X main.authorizedKeysFragment=false) or at run time
// ($IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT, Ignition's name), on a root
// whose image already has the file: its line stays, the config's keys
// are added once, and no authorized_keys.d appears. The environment wins
// over the build in both directions.
func TestFilesAuthorizedKeysFile(t *testing.T) {
	requireFilesTier(t)
	def := buildFlint(t)
	srv := filesServers(t)
	cfg := passwdCfg(`{"users":[{"name":"core","uid":1500,"sshAuthorizedKeys":["ssh-ed25519 AAAAC3 core@one","ssh-rsa AAAAB3 core@two"]}]}`)
	image := []fnode{
		{Path: "home/core/.ssh", Kind: "dir", Mode: 0o700},
		{Path: "home/core/.ssh/authorized_keys", Contents: "# from the image\nssh-rsa AAAAB3 core@two\n", Mode: 0o600},
	}
	merged := []fnode{
		{Path: "home/core/.ssh/authorized_keys", Contents: "# from the image\nssh-rsa AAAAB3 core@two\nssh-ed25519 AAAAC3 core@one\n", Mode: 0o600, Owner: "1500:1500"},
		{Path: "home/core/.ssh/authorized_keys.d", Kind: "absent"},
	}
	fragment := []fnode{
		{Path: "home/core/.ssh/authorized_keys", Contents: "# from the image\nssh-rsa AAAAB3 core@two\n", Mode: 0o600},
		{Path: "home/core/.ssh/authorized_keys.d/ignition", Contents: "ssh-ed25519 AAAAC3 core@one\nssh-rsa AAAAB3 core@two\n", Mode: 0o600, Owner: "1500:1500"},
	}
	for _, tc := range []struct {
		name     string
		keysFile bool // built with authorizedKeysFragment=false
		env      []string
		out      []fnode
	}{
		{"default build, environment false", false, []string{"IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT=false"}, merged},
		{"built false", true, nil, merged},
		{"built false, environment true", true, []string{"IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT=true"}, fragment},
		{"default build", false, nil, fragment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := def
			if tc.keysFile {
				var err error
				if bin, err = buildFragmentOff(); err != nil {
					t.Skip(err)
				}
			}
			c := filesCase{Name: tc.name, In: image, Config: cfg, Env: tc.env, Out: tc.out}
			runFilesCase(t, bin, c, config.Version{Major: 3, Minor: 4}, srv)
		})
	}
}
