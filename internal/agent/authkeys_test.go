//go:build unix

package agent

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

func TestCheckAuthorizedKey(t *testing.T) {
	_, blob, _ := strings.Cut(testKeyOne, " ")
	blob, _, _ = strings.Cut(blob, " ")
	for _, c := range []struct {
		line, want string // want "" is a good key
	}{
		{testKeyOne, ""},
		{testKeyTwo, ""},
		{"ssh-ed25519 " + blob, ""}, // no comment
		{`no-pty,command="echo a b" ` + testKeyOne, ""},
		{`from="10.0.0.0/8" ` + testKeyTwo, ""},
		{"ssh-rsa AAAA azure", "not an SSH key"},
		{"not-a-key", "no known key type"},
		{"ssh-ed25519", "without its key data"},
		{"ssh-ed25519 !!!! x", "not base64"},
		{"ssh-rsa " + blob + " mislabelled", "does not hold a ssh-rsa key"},
		{`command="unterminated ` + testKeyOne, "unterminated quote"},
		// An Azure keyData folded over lines, not joined.
		{testKeyTwo[:40], "cut short"},
	} {
		err := checkAuthorizedKey(c.line)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("checkAuthorizedKey(%.40q) = %v, want %q", c.line, err, c.want)
		}
	}
}

// A malformed key fails ssh-keys with a message naming it, and nothing is
// written, as Afterburn refuses the lot.
func TestSSHKeysRefusesMalformed(t *testing.T) {
	doc := `{"hostname":"drop","public_keys":["` + testKeyOne + `","ssh-rsa AAAA broken@host"]}`
	f := platformtest.NewService(t, map[string]http.HandlerFunc{"GET /metadata/v1.json": platformtest.Answer(200, doc)})
	root := userRoot(t)
	a := newTestAgent(t, "digitalocean", f.URL, root)
	err := a.SSHKeys(context.Background(), "core")
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), `SSH key 2 of 2 ("broken@host")`) {
		t.Errorf("SSHKeys() = %v, want ErrProtocol naming key 2", err)
	}
	if _, err := os.Stat(filepath.Join(root, "home/core/.ssh/authorized_keys.d/flint")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("keys file after a refused key: %v, want none", err)
	}
}
