package agent

// SSH keys from metadata are checked before they are written, as Afterburn
// parses each one (coreos/afterburn src/providers/mod.rs, with the
// openssh-keys crate) and refuses the lot when one is malformed: a key
// that sshd would skip silently is a mistake in the platform's metadata
// the operator should see, named, in the journal.

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
)

// keyTypes are the public key algorithms sshd(8) accepts in
// authorized_keys (AUTHORIZED_KEYS FILE FORMAT), as the blob names them.
var keyTypes = []string{
	"ssh-rsa", "ssh-dss", "ssh-ed25519",
	"ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
	"sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
}

// knownKeyType reports an algorithm of keyTypes or its certificate
// (<type>-cert-v01@openssh.com, PROTOCOL.certkeys).
func knownKeyType(t string) bool {
	for _, k := range keyTypes {
		base, _, _ := strings.Cut(k, "@")
		if t == k || t == base+"-cert-v01@openssh.com" {
			return true
		}
	}
	return false
}

// checkAuthorizedKey checks one authorized_keys line: optional options,
// a known key type, the base64 key blob whose first field names that
// same type (RFC 4253 section 6.6), an optional comment. The error says
// what is wrong without quoting the key.
func checkAuthorizedKey(line string) error {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return fmt.Errorf("empty")
	}
	if !knownKeyType(fields[0]) {
		// The first field is options (sshd(8)): skip it, minding quotes,
		// which may hold blanks.
		rest, err := skipKeyOptions(strings.TrimSpace(line))
		if err != nil {
			return err
		}
		if fields = strings.Fields(rest); len(fields) == 0 || !knownKeyType(fields[0]) {
			return fmt.Errorf("no known key type (want one of %s)", strings.Join(keyTypes, ", "))
		}
	}
	if len(fields) < 2 {
		return fmt.Errorf("%s key without its key data", fields[0])
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return fmt.Errorf("%s key data is not base64: %w", fields[0], err)
	}
	parts, ok := wireStrings(blob)
	if !ok {
		return fmt.Errorf("%s key data is cut short or not an SSH key", fields[0])
	}
	if len(parts) == 0 || parts[0] != fields[0] {
		return fmt.Errorf("%s key data does not hold a %s key", fields[0], fields[0])
	}
	// The fields each algorithm's key holds after its name (RFC 4253
	// section 6.6, RFC 8709 section 4, RFC 5656 section 3.1, OpenSSH's
	// PROTOCOL.u2f); certificates are left to sshd.
	want := map[string]int{"ssh-rsa": 2, "ssh-dss": 4, "ssh-ed25519": 1, "ecdsa-sha2-nistp256": 2, "ecdsa-sha2-nistp384": 2,
		"ecdsa-sha2-nistp521": 2, "sk-ssh-ed25519@openssh.com": 2, "sk-ecdsa-sha2-nistp256@openssh.com": 3}
	if n, ok := want[fields[0]]; ok && len(parts)-1 != n {
		return fmt.Errorf("%s key data is cut short or has extra data", fields[0])
	}
	if strings.Contains(fields[0], "ed25519") && len(parts[1]) != 32 {
		return fmt.Errorf("%s key data is not a 32-byte key", fields[0])
	}
	return nil
}

// wireStrings splits an SSH key blob into its length-prefixed fields (RFC
// 4251 section 5, "string" and "mpint"); false when a length runs past the
// end.
func wireStrings(b []byte) ([]string, bool) {
	var out []string
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, false
		}
		n := binary.BigEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			return nil, false
		}
		out = append(out, string(b[4:4+n]))
		b = b[4+n:]
	}
	return out, true
}

// skipKeyOptions returns what follows the options field of an
// authorized_keys line: comma-separated options, with blanks only inside
// double quotes (a backslash escapes a quote).
func skipKeyOptions(line string) (string, error) {
	quoted := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case (c == ' ' || c == '\t') && !quoted:
			return line[i:], nil
		}
	}
	if quoted {
		return "", fmt.Errorf("options with an unterminated quote")
	}
	return "", nil
}

// checkAuthorizedKeys checks every key; the error names the first
// malformed one by its position (from 1) and its comment.
func checkAuthorizedKeys(keys []string) error {
	for i, k := range keys {
		if err := checkAuthorizedKey(k); err != nil {
			return fmt.Errorf("SSH key %d of %d%s: %w: %w", i+1, len(keys), keyComment(k), ErrProtocol, err)
		}
	}
	return nil
}

// keyComment returns ` ("comment")` for a key line with a comment after
// a known type and its data, "" otherwise.
func keyComment(line string) string {
	f := strings.Fields(line)
	for i, s := range f {
		if knownKeyType(s) && len(f) > i+2 {
			return fmt.Sprintf(" (%q)", strings.Join(f[i+2:], " "))
		}
	}
	return ""
}
