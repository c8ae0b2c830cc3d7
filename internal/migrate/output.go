package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
)

// RemoveOptions choose between the translators' rules for what goes when
// the config rejects a value of their output.
type RemoveOptions struct {
	// StopAtLeaf removes the innermost list entry passed so far when the
	// path runs into a value that is neither a mapping nor a list (the
	// rejected part lies inside a string); without it nothing is removed.
	StopAtLeaf bool
	// OutsideLists removes the rejected value itself (its key) when the
	// path passes no list; without it nothing is removed.
	OutsideLists bool
	// DropEmpty deletes a list's key when its last entry is removed,
	// rather than leaving an empty list.
	DropEmpty bool
}

// Remove deletes from a config tree (a decoded JSON object of
// map[string]any and []any) the innermost list entry on a JSON path
// ($.storage.files.2.mode: files entry 2), the object that holds the
// rejected value, and renumbers the origins of the entries after it. It
// returns the origin of what it removed (Nearest, before renumbering) and
// whether anything was removed.
func Remove[P any](tree any, path string, origins map[string]P, opts RemoveOptions) (P, bool) {
	var at P
	parts := strings.Split(strings.TrimPrefix(path, "$."), ".")
	cut := -1 // the index in parts of the innermost list entry
	node := tree
	var parents []any // parents[i] holds parts[i]
walk:
	for i, p := range parts {
		parents = append(parents, node)
		switch n := node.(type) {
		case map[string]any:
			node = n[p]
		case []any:
			k, err := strconv.Atoi(p)
			if err != nil || k < 0 || k >= len(n) {
				return at, false
			}
			cut = i
			node = n[k]
		default:
			if !opts.StopAtLeaf {
				return at, false
			}
			break walk
		}
	}
	if cut < 0 {
		parent, ok := parents[len(parts)-1].(map[string]any)
		if !opts.OutsideLists || !ok {
			return at, false
		}
		at, _ = Nearest(origins, path)
		delete(parent, parts[len(parts)-1])
		return at, true
	}
	if cut < 1 {
		return at, false
	}
	holder, ok := parents[cut-1].(map[string]any)
	list, ok2 := parents[cut].([]any)
	if !ok || !ok2 {
		return at, false
	}
	k, _ := strconv.Atoi(parts[cut])
	prefix := "$." + strings.Join(parts[:cut], ".") + "."
	at, _ = Nearest(origins, prefix+parts[cut])
	list = slices.Delete(list, k, k+1)
	holder[parts[cut-1]] = list
	if opts.DropEmpty && len(list) == 0 {
		delete(holder, parts[cut-1])
	}
	Renumber(origins, prefix, k)
	return at, true
}

// DropNewer deletes from a config tree every key the output version v does
// not have (config.FieldSince), calling dropped with the field's generic
// path (storage.luks), the JSON path of the object that held it ($.storage,
// list indices included) and the version that added it, for the report.
func DropNewer(tree any, v config.Version, dropped func(field, parent string, since config.Version)) {
	dropNewer(tree, v, "", "$", dropped)
}

func dropNewer(node any, v config.Version, path, jpath string, dropped func(field, parent string, since config.Version)) {
	switch n := node.(type) {
	case map[string]any:
		for k, val := range n {
			p := strings.TrimPrefix(path+"."+k, ".")
			if since, ok := config.FieldSince(p); ok && !v.AtLeast(since) {
				delete(n, k)
				dropped(p, jpath, since)
				continue
			}
			dropNewer(val, v, p, jpath+"."+k, dropped)
		}
	case []any:
		for i, val := range n {
			dropNewer(val, v, path, jpath+"."+strconv.Itoa(i), dropped)
		}
	}
}

// ErrUnsettled is returned by Settle when fix gave up on the output.
var ErrUnsettled = errors.New("the output does not validate")

// ErrTooMany is returned by Settle when the output still did not validate
// after its limit of repairs.
var ErrTooMany = errors.New("too many problems")

// Tree is a config as the repairs edit it: a decoded JSON object of
// map[string]any, []any and json.Number (numbers kept as written).
func Tree(cfg config.Config) (any, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return tree, nil
}

// Settle writes tree as the translators' output (JSON indented by two
// spaces, a newline at the end) and validates it with the config library,
// at most limit times: while it does not validate, fix is handed the
// report, to remove what was rejected (and report it) or to give up by
// returning false. It returns the last output written and its report; the
// error is nil when the output validated, else ErrUnsettled (the output
// and report kept for the message) or ErrTooMany.
func Settle(tree any, limit int, fix func(config.Report) bool) ([]byte, config.Report, error) {
	for range limit {
		out, err := json.MarshalIndent(tree, "", "  ")
		if err != nil {
			return nil, config.Report{}, err
		}
		out = append(out, '\n')
		_, _, rep, perr := config.ParseDeclared(out)
		if perr == nil {
			return out, rep, nil
		}
		if !fix(rep) {
			return out, rep, ErrUnsettled
		}
	}
	return nil, config.Report{}, ErrTooMany
}
