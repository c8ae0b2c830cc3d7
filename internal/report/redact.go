package report

import (
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"unicode"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/escape"
)

// Redactor hides a config's secrets in text that leaves the machine: the
// failed stage's error in the report, and every field of the journal
// entries uploaded. It applies the rules the console and the journal
// already follow (every URL as config.DescribeURL shows it: no userinfo,
// query or fragment, a data URL as "data URL"), and then, should an error
// or a log line have quoted one anyway, replaces every value that
// config.Redacted hides (password hashes, LUKS key files, unit contents,
// header values, data URLs and what they decode to, a URL's credentials
// and query) by config.RedactedMarker.
type Redactor struct {
	// secrets, longest first, so that a secret holding another is
	// replaced whole.
	secrets []string
}

// minSecret is the shortest value hidden by literal replacement: shorter
// ones ("0", "ab") would garble unrelated text, and the URL rules cover
// the short tokens that matter there.
const minSecret = 4

// minToken is the shortest URL user name hidden on its own.
const minToken = 8

// NewRedactor returns the Redactor for c: its secrets are the values that
// differ between c and config.Redacted(c), so that a field config.Redacted
// learns to hide is hidden here too.
func NewRedactor(c config.Config) *Redactor {
	var plain, red any
	if b, err := json.Marshal(c); err == nil {
		json.Unmarshal(b, &plain)
	}
	if b, err := json.Marshal(config.Redacted(c)); err == nil {
		json.Unmarshal(b, &red)
	}
	set := map[string]bool{}
	diff(plain, red, set)
	r := &Redactor{}
	for s := range set {
		if len(s) >= minSecret && s != config.RedactedMarker {
			r.secrets = append(r.secrets, s)
		}
	}
	sort.Slice(r.secrets, func(i, j int) bool {
		if len(r.secrets[i]) != len(r.secrets[j]) {
			return len(r.secrets[i]) > len(r.secrets[j])
		}
		return r.secrets[i] < r.secrets[j]
	})
	return r
}

// diff adds to set the strings of a that b replaced, and their parts that
// can appear on their own in an error.
func diff(a, b any, set map[string]bool) {
	switch x := a.(type) {
	case map[string]any:
		y, _ := b.(map[string]any)
		for k, v := range x {
			diff(v, y[k], set)
		}
	case []any:
		y, _ := b.([]any)
		for i, v := range x {
			var w any
			if i < len(y) {
				w = y[i]
			}
			diff(v, w, set)
		}
	case string:
		if y, ok := b.(string); !ok || y != x {
			addSecret(x, set)
		}
	}
}

// addSecret adds s and, for a URL, its secret parts: the userinfo, the
// query and each query value, the fragment, a data URL's content decoded.
func addSecret(s string, set map[string]bool) {
	set[s] = true
	if strings.Contains(s, "\n") {
		// Unit contents: the settings that carry credentials
		// (Environment=KEY=VALUE) can be quoted alone. Other lines
		// (WantedBy=multi-user.target) are not hidden on their own:
		// they would garble every journal line that names a target.
		for _, line := range strings.Split(s, "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
			if !ok || !strings.Contains(strings.TrimSpace(k), "Environment") {
				continue
			}
			set[strings.TrimSpace(line)] = true
			for v = strings.TrimSpace(v); v != ""; {
				set[v] = true
				_, v, _ = strings.Cut(v, "=")
			}
		}
		return
	}
	u, err := url.Parse(s)
	if err != nil {
		return
	}
	if strings.EqualFold(u.Scheme, "data") {
		if _, data, ok := strings.Cut(u.Opaque, ","); ok {
			set[data] = true
			if d, err := url.PathUnescape(data); err == nil {
				set[d] = true
			}
		}
		return
	}
	if u.User != nil {
		set[u.User.String()] = true
		// A user name alone is hidden when it is long enough to be a
		// token (https://TOKEN@host/); "proxy" or "core" would garble
		// host names.
		if n := u.User.Username(); len(n) >= minToken {
			set[n] = true
		}
		if p, ok := u.User.Password(); ok {
			set[p] = true
		}
	}
	if u.RawQuery != "" {
		set[u.RawQuery] = true
		for _, vs := range u.Query() {
			for _, v := range vs {
				set[v] = true
			}
		}
	}
	if u.Fragment != "" {
		set[u.Fragment] = true
	}
}

// Text redacts s for a line of the report: URLs described, secrets
// replaced, and the result made one safe line (escape.Line), as the
// journal's MESSAGE has it.
func (r *Redactor) Text(s string) string {
	return escape.Line(r.Value(s))
}

// Value redacts s keeping its lines and bytes otherwise as they are: for
// journal fields, which may hold several lines.
func (r *Redactor) Value(s string) string {
	s = describeURLs(s)
	if r == nil {
		return s
	}
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, config.RedactedMarker)
		}
	}
	return s
}

// describeURLs replaces every URL in s (a word holding "://", or one
// starting with "data:") by config.DescribeURL's view of it, as
// agent.RedactReason does for the platforms' consoles, keeping the text
// between the words exactly.
func describeURLs(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, "data:") {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexFunc(s, isSpace)
		if i < 0 {
			i = len(s)
		}
		b.WriteString(describeWord(s[:i]))
		j := i
		for j < len(s) && isSpace(rune(s[j])) {
			j++
		}
		b.WriteString(s[i:j])
		s = s[j:]
	}
	return b.String()
}

func isSpace(r rune) bool { return unicode.IsSpace(r) || r == '"' || r == '\'' || r == '`' }

// describeWord describes the URL in one word, keeping what surrounds it
// (a "url=" before it, punctuation after it).
func describeWord(w string) string {
	j := strings.Index(w, "://")
	if j < 0 {
		// A data URL, alone or after "url=", "(": not "metadata:".
		if k := strings.Index(strings.ToLower(w), "data:"); k >= 0 && (k == 0 || !isWordByte(w[k-1])) {
			return w[:k] + "data URL"
		}
		return w
	}
	start := strings.LastIndexFunc(w[:j], func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')
	}) + 1
	u := strings.TrimRight(w[start:], ".,:;)]'\"")
	return w[:start] + config.DescribeURL(u) + w[start+len(u):]
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
