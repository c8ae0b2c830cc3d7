package kickstart

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// maxIncludeDepth bounds %include nesting; a loop is caught before it, by
// the chain of files being read.
const maxIncludeDepth = 16

// pos is where a command or section starts: the file it comes from (as
// named on the command line or in its %include) and the line, from 1.
type pos struct {
	file string
	line int
}

func (p pos) String() string { return fmt.Sprintf("%s:%d", p.file, p.line) }

// item is one command, or one %section with its body.
type item struct {
	at   pos
	name string   // "part", or "%post" for a section
	args []string // the command's arguments or the section header's
	body []string // a section's lines, without %end
	end  int      // a section's last line (its %end) in at.file; 0 for a command
}

// sections are the %sections kickstart defines (pykickstart's sections.py),
// plus %ignition.
var sections = map[string]bool{
	"%pre": true, "%pre-install": true, "%post": true, "%packages": true, "%onerror": true,
	"%traceback": true, "%certificate": true, "%addon": true, "%anaconda": true, "%ignition": true,
}

// reader turns kickstart text into items, following %include.
type reader struct {
	readFile func(string) ([]byte, error)
	items    []item
	rep      *Report
	chain    []string // the files being read, outermost first
}

// read appends the items of one file. name is how reports name the file;
// path is where it was read from (includes are relative to its directory).
func (r *reader) read(name, path string, data []byte) {
	r.chain = append(r.chain, filepath.Clean(path))
	defer func() { r.chain = r.chain[:len(r.chain)-1] }()
	var open *item
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	for i, text := range lines {
		at := pos{name, i + 1}
		trimmed := strings.TrimSpace(text)
		first, rest, _ := strings.Cut(trimmed, " ")
		if open != nil {
			switch {
			case first == "%end":
				open.end = at.line
				r.items = append(r.items, *open)
				open = nil
			case first == "%ksappend":
				// pykickstart expands %ksappend as text before parsing
				// (parser.py, preprocessFromString), so inside a section
				// it adds lines to the body.
				open.body = append(open.body, r.appendText(at, path, strings.TrimSpace(rest))...)
			case first == "%include":
				// pykickstart reads an %include inside a section as a
				// kickstart of its own and goes on with the section
				// (parser.py, _readSection).
				r.include(at, path, strings.TrimSpace(rest))
			case sections[first]:
				r.rep.add(sevError, open.at, "%s has no %%end before the next section at line %d; add %%end", open.name, at.line)
				open.end = at.line - 1
				r.items = append(r.items, *open)
				open = r.openSection(at, trimmed)
			default:
				open.body = append(open.body, text)
			}
			continue
		}
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case first == "%include" || first == "%ksappend":
			if name, ipath, idata, ok := r.resolve(at, path, strings.TrimSpace(rest), first); ok {
				r.read(name, ipath, idata)
			}
		case first == "%end":
			r.rep.add(sevError, at, "%%end without a section; remove it")
		case strings.HasPrefix(first, "%"):
			open = r.openSection(at, trimmed)
		default:
			args, err := split(trimmed)
			if err != nil {
				r.rep.add(sevError, at, "%v; the line is not translated", err)
				continue
			}
			if len(args) > 0 {
				r.items = append(r.items, item{at: at, name: args[0], args: args[1:]})
			}
		}
	}
	if open != nil {
		r.rep.add(sevError, open.at, "%s has no %%end; add one (the section is read to the end of the file)", open.name)
		open.end = len(lines)
		r.items = append(r.items, *open)
	}
}

// openSection starts a section from its header line.
func (r *reader) openSection(at pos, header string) *item {
	args, err := split(header)
	if err != nil || len(args) == 0 {
		r.rep.add(sevError, at, "section header: %v", err)
		args = strings.Fields(header)
	}
	return &item{at: at, name: args[0], args: args[1:]}
}

// resolve finds an %include'd or %ksappend'ed file, relative to the
// including file's directory, refusing loops and runaway nesting. ok is
// false when the file is not read (the report says why).
func (r *reader) resolve(at pos, from, target, directive string) (name, path string, data []byte, ok bool) {
	if args, err := split(target); err == nil && len(args) == 1 {
		target = args[0]
	}
	if target == "" {
		r.rep.add(sevError, at, "%s without a file name", directive)
		return "", "", nil, false
	}
	path = target
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(from), path)
	}
	clean := filepath.Clean(path)
	for i, f := range r.chain {
		if f == clean {
			r.rep.add(sevError, at, "%s %s is a loop (%s); the include is skipped",
				directive, target, strings.Join(append(r.chain[i:], clean), " includes "))
			return "", "", nil, false
		}
	}
	if len(r.chain) >= maxIncludeDepth {
		r.rep.add(sevError, at, "%s %s nests more than %d files deep; the include is skipped", directive, target, maxIncludeDepth)
		return "", "", nil, false
	}
	data, err := r.readFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			r.rep.add(sevError, at, "%s %s: %s does not exist; a file that %%pre writes at install time cannot be followed: put its commands in the kickstart", directive, target, path)
			return "", "", nil, false
		}
		r.rep.add(sevError, at, "%s %s: %v", directive, target, err)
		return "", "", nil, false
	}
	name = target
	if !filepath.IsAbs(target) {
		name = filepath.Join(filepath.Dir(at.file), target)
	}
	return name, path, data, true
}

// include reads an %include'd file as kickstart commands and sections.
func (r *reader) include(at pos, from, target string) {
	if name, path, data, ok := r.resolve(at, from, target, "%include"); ok {
		r.read(name, path, data)
	}
}

// appendText returns the lines of an %ksappend'ed file, for the body of the
// section it stands in.
func (r *reader) appendText(at pos, from, target string) []string {
	_, _, data, ok := r.resolve(at, from, target, "%ksappend")
	if !ok {
		return nil
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

// split breaks a command line into words as a POSIX shell would (pykickstart
// uses shlex): whitespace separates, quotes group, a backslash escapes, and
// a # at the start of a word begins a comment.
func split(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			return words, nil
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errUnterminatedQuote
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errUnterminatedQuote
			}
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
