package platform

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestReadYAMLKeys(t *testing.T) {
	doc, err := readYAMLKeys([]byte("---\n# comment\na: plain value # comment\nb: 'it''s'\nc: \"q\\u00e9\"\nd: [x, 'y']\ne:\n- 1\n- two\n  folded\nf:\n  z: last\n  y: first\ng: ~\nskip:\n  deep:\n    - {x: 1}\n"),
		"a", "b", "c", "d", "e", "f", "g")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a": {"plain value"}, "b": {"it's"}, "c": {"qé"}, "d": {"x", "y"}, "e": {"1", "two folded"}, "f": {"first", "last"}, "g": nil}
	for k, v := range want {
		if !slices.Equal(doc[k], v) {
			t.Errorf("%s = %q, want %q", k, doc[k], v)
		}
	}
	if doc, err := readYAMLKeys([]byte("a: |\n  block\nb: &x anchored\nc: *x\n"), "a", "c"); err != nil || !slices.Equal(doc["a"], []string{"block\n"}) || !slices.Equal(doc["c"], []string{"anchored"}) {
		t.Errorf("block scalar and alias = %q, %v", doc, err)
	}
	for _, bad := range []string{"a: 1\na: 2\n", "a: *x\n", "\ta: 1\n", "a:\n  - - x\n", "a: \"open\n", "a: [x, [y]]\n", "plain line\n", "a:\n  k: 1\n  k: 2\n"} {
		if _, err := readYAMLKeys([]byte(bad), "a"); !errors.Is(err, errYAML) {
			t.Errorf("%q: %v, want errYAML", bad, err)
		}
	}
}

func TestReadYAMLTree(t *testing.T) {
	for name, c := range map[string]struct {
		in   string
		want string // fmt's %v of the tree
	}{
		"mapping in a list, list at the key's indentation": {
			"---\n# comment\nversion: 1\nconfig:\n    - type: physical   # first\n      name: eth0\n      subnets:\n      - type: static\n        address: '192.168.1.1'\n      - type: dhcp6\n    - type: nameserver\n      address:\n      - \"1.1.1.1\"\n...\nignored: [\n",
			"map[config:[map[name:eth0 subnets:[map[address:192.168.1.1 type:static] map[type:dhcp6]] type:physical] map[address:[1.1.1.1] type:nameserver]] version:1]",
		},
		"nested mappings, flow list, empty values": {
			"version: 2\nethernets:\n  eth0:\n    addresses: [192.168.1.10/24, '2001:db8::10/64']\n    match:\n      macaddress: \"06:aa\"\n  id0:\n  eth1:\n    dhcp4: true\n    routes: # none\n",
			"map[ethernets:map[eth0:map[addresses:[192.168.1.10/24 2001:db8::10/64] match:map[macaddress:06:aa]] eth1:map[dhcp4:true routes:] id0:] version:2]",
		},
		"item on the dash's line below": {"-\n  a: 1\n- b\n-\n", "[map[a:1] b ]"},
		"indented document":             {"  a:\n    - x\n  b: y\n", "map[a:[x] b:y]"},
		"JSON":                          {`{"version": 1, "config": [{"type": "physical"}]}`, "map[config:[map[type:physical]] version:1]"},
		"empty":                         {"# nothing\n", "<nil>"},
	} {
		v, err := readYAMLTree([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := fmt.Sprint(v); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, c.want)
		}
	}
	for name, c := range map[string]struct{ in, want string }{
		"tab":              {"a:\n\tb: secret\n", "line 2: found character that cannot start any token"},
		"key twice":        {"a: 1\nb: 2\na: secret\n", "line 3: a key given twice"},
		"nested key twice": {"a:\n  b: 1\n  b: secret\n", "line 3: a key given twice"},
		"unknown alias":    {"a:\n  - *secret\n", "unknown anchor"},
		"not a key":        {"a: 1\nsecret\n", "line 2: could not find expected"},
		"unclosed quote":   {"a: \"secret\n", "found unexpected end of stream"},
		"deeper key":       {"a: 1\n  b: secret\n", "line 2: mapping values are not allowed in this context"},
		"key after a list": {"- a\nb: secret\n", "did not find expected"},
		"broken JSON":      {`{"a": "secret"`, "YAML flint does not read"},
		"JSON and more":    {`{"a": 1} {"b": "secret"}`, "data after the JSON document"},
		"alias loop, deep": {strings.Repeat("- ", 40) + "x\n", "nested more than 32 deep"},
	} {
		_, err := readYAMLTree([]byte(c.in))
		if !errors.Is(err, errYAML) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want errYAML saying %q", name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error quotes the document: %v", name, err)
		}
	}
}
