package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zvmList is vmur list output as CP formats the reader queue (see
// vmur(8) and CP QUERY READER ALL): a header, then one line per spool file.
const zvmList = `ORIGINID FILE CLASS RECORDS  CPY HOLD DATE  TIME     NAME      TYPE      DIST
MAINT    0012 A PUN 00000410 001 NONE 06/11 14:20:31 kernel    img       LINUX1
LINUX1   0017 A PUN 00000023 001 NONE 06/11 14:21:05 config    ign       LINUX1
LINUX1   0019 A PUN 00000023 001 NONE 06/11 14:25:52 other     ign       LINUX1
`

func TestZVMFindConfig(t *testing.T) {
	tests := []struct {
		name   string
		list   string
		id     string
		spool  string
		absent bool
	}{
		{name: "first ign file", list: zvmList, id: "0017", spool: "config.ign"},
		{name: "upper case from CMS", list: "ORIGINID FILE CLASS RECORDS  CPY HOLD DATE  TIME     NAME      TYPE      DIST\nLINUX1   0003 A PUN 00000002 001 NONE 01/02 03:04:05 CONFIG    IGN       LINUX1\n", id: "0003", spool: "CONFIG.IGN"},
		{name: "no ign file", list: strings.Replace(zvmList, "ign ", "txt ", -1), absent: true},
		{name: "header only", list: "ORIGINID FILE CLASS RECORDS  CPY HOLD DATE  TIME     NAME      TYPE      DIST\n", absent: true},
		{name: "empty reader", list: "", absent: true},
		{name: "file without name and type", list: "LINUX1   0004 A PUN 00000002 001 NONE 01/02 03:04:05                     LINUX1\n", absent: true},
		{name: "blank lines and CRLF", list: "\r\n" + strings.ReplaceAll(zvmList, "\n", "\r\n"), id: "0017", spool: "config.ign"},
	}
	for _, tt := range tests {
		got, ok := zvmFindConfig([]byte(tt.list))
		if tt.absent {
			if ok {
				t.Errorf("%s: zvmFindConfig = %+v, want none", tt.name, got)
			}
			continue
		}
		if !ok || got.id != tt.id || got.name != tt.spool {
			t.Errorf("%s: zvmFindConfig = %+v, %v; want id %s, name %s", tt.name, got, ok, tt.id, tt.spool)
		}
	}
}

func TestZVMFetchConfig(t *testing.T) {
	const config = `{"ignition":{"version":"3.4.0"}}`
	// Punched data arrives in 80-byte records padded with NULs.
	padded := config + strings.Repeat("\x00", 80-len(config)%80)
	errFail := errors.New("exit status 1")
	happy := []string{
		"modprobe vmur",
		"chccwdev -e 000c",
		"udevadm settle",
		"vmur li",
		"vmur re -f 0017 <file>",
	}
	tests := []struct {
		name     string
		list     string
		received string
		errs     []string
		want     string
		wantErr  error
		errText  string
		argv     []string
	}{
		{name: "config", list: zvmList, received: padded, want: config, argv: happy},
		{
			name: "reader on the cio_ignore list", list: zvmList, received: padded, want: config,
			errs: []string{"chccwdev -e 000c#1"},
			argv: []string{"modprobe vmur", "chccwdev -e 000c", "cio_ignore -r 000c", "chccwdev -e 000c", "udevadm settle", "vmur li", "vmur re -f 0017 <file>"},
		},
		{name: "no ign file", list: strings.Replace(zvmList, " ign ", " txt ", -1), wantErr: ErrNoConfig, argv: happy[:4]},
		{name: "empty file", list: zvmList, received: strings.Repeat("\x00", 80), wantErr: ErrNoConfig, argv: happy},
		{name: "modprobe fails", errs: []string{"modprobe vmur"}, wantErr: errFail, argv: happy[:1]},
		{name: "cio_ignore fails", errs: []string{"chccwdev -e 000c#1", "cio_ignore -r 000c"}, errText: "exposing reader device 000c", argv: []string{"modprobe vmur", "chccwdev -e 000c", "cio_ignore -r 000c"}},
		{name: "reader never comes online", errs: []string{"chccwdev -e 000c#1", "chccwdev -e 000c#2"}, errText: "bringing reader device 000c online", argv: []string{"modprobe vmur", "chccwdev -e 000c", "cio_ignore -r 000c", "chccwdev -e 000c"}},
		{name: "udevadm fails", list: zvmList, errs: []string{"udevadm settle"}, wantErr: errFail, argv: happy[:3]},
		{name: "list fails", errs: []string{"vmur li"}, wantErr: errFail, argv: happy[:4]},
		{name: "receive fails", list: zvmList, errs: []string{"vmur re -f 0017 <file>"}, wantErr: errFail, argv: happy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var received string
			seen := map[string]int{}
			runner := &fakeRunner{out: map[string]string{"vmur li": tt.list}}
			runner.do = func(argv []string) error {
				line := strings.Join(argv, " ")
				if len(argv) == 5 && argv[0] == "vmur" && argv[1] == "re" {
					received = argv[4]
					line = strings.Join(argv[:4], " ") + " <file>"
				}
				seen[line]++
				for _, e := range tt.errs {
					l, n, _ := strings.Cut(e, "#")
					if l == line && (n == "" || n == fmt.Sprint(seen[line])) {
						return errFail
					}
				}
				if received != "" && line == "vmur re -f 0017 <file>" {
					if fi, err := os.Stat(filepath.Dir(received)); err != nil || fi.Mode().Perm() != 0o700 {
						t.Errorf("spool file goes to %s (%v, %v), want a private directory", received, fi, err)
					}
					return os.WriteFile(received, []byte(tt.received), 0o600)
				}
				return nil
			}
			p := newZVM(Env{Runner: runner, Logger: hvTestLogger(t)})
			got, err := p.FetchConfig(context.Background())
			checkFetchConfig(t, got, err, tt.want, tt.wantErr, tt.errText)
			var lines []string
			for _, l := range runner.lines() {
				if strings.HasPrefix(l, "vmur re -f ") {
					f := strings.Fields(l)
					l = strings.Join(f[:4], " ") + " <file>"
				}
				lines = append(lines, l)
			}
			if fmt.Sprint(lines) != fmt.Sprint(tt.argv) {
				t.Errorf("ran\n%q\nwant\n%q", lines, tt.argv)
			}
			if received != "" {
				if _, err := os.Stat(filepath.Dir(received)); !os.IsNotExist(err) {
					t.Errorf("received spool file's directory %s left behind", filepath.Dir(received))
				}
			}
		})
	}
	if _, err := newZVM(Env{}).FetchConfig(context.Background()); err == nil {
		t.Error("FetchConfig without a runner succeeded")
	}
}
