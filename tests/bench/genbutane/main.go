// Command genbutane writes a large Butane config for benchmarking
// `flint translate`: 2,000 files with inline contents (20 lines of text
// each, which translate to gzipped data URLs) in 40 directories, 100
// systemd units with drop-ins, 20 users with SSH keys and a mount unit,
// about 2.9 MB of YAML. The output depends only on the fixed seed.
//
// Usage:
//
//	go run ./tests/bench/genbutane [-o FILE]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
)

// The shape of the config. Changing any of these changes what the
// figures recorded in tests/bench/butane.md mean.
const (
	seed     = 20261201
	nDirs    = 40
	nFiles   = 2000
	linesPer = 20
	nUnits   = 100
	nUsers   = 20
)

var words = strings.Fields(`provision boot disk partition filesystem mount unit service
	config kernel argument network route address gateway resolver journal timer socket target
	user group password key authorized shell home directory link file mode owner append inline`)

func main() {
	out := flag.String("o", "", "write the config to FILE instead of stdout")
	flag.Parse()
	var w io.Writer = os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "genbutane:", err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	n, err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genbutane:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "genbutane: %d bytes\n", n)
}

// counter counts what is written through it.
type counter struct {
	w io.Writer
	n int
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

func write(w io.Writer) (int, error) {
	c := &counter{w: w}
	rng := rand.New(rand.NewPCG(seed, seed))
	p := func(format string, args ...any) { fmt.Fprintf(c, format, args...) }
	p("variant: fcos\nversion: 1.5.0\n")
	p("passwd:\n  users:\n")
	for i := range nUsers {
		p("    - name: user%02d\n      groups: [wheel]\n      ssh_authorized_keys:\n        - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%040x user%02d@example\n", i, rng.Uint64(), i)
	}
	p("storage:\n  disks:\n    - device: /dev/vdb\n      wipe_table: true\n      partitions:\n        - number: 1\n          label: data\n")
	p("  filesystems:\n    - device: /dev/disk/by-partlabel/data\n      path: /var/srv\n      format: xfs\n      with_mount_unit: true\n")
	p("  directories:\n")
	for d := range nDirs {
		p("    - path: /var/srv/dir%02d\n      mode: 0755\n", d)
	}
	p("  files:\n")
	for i := range nFiles {
		p("    - path: /var/srv/dir%02d/file-%04d.txt\n      mode: 0644\n      contents:\n        inline: |\n", i%nDirs, i)
		for range linesPer {
			p("          ")
			for k := range 8 {
				if k > 0 {
					p(" ")
				}
				p("%s", words[rng.IntN(len(words))])
			}
			p("\n")
		}
	}
	p("systemd:\n  units:\n")
	for i := range nUnits {
		p("    - name: app%03d.service\n      enabled: %t\n      contents: |\n        [Unit]\n        Description=Application %d\n\n        [Service]\n        ExecStart=/usr/bin/app --instance %d\n\n        [Install]\n        WantedBy=multi-user.target\n", i, i%3 == 0, i, i)
		p("      dropins:\n        - name: limits.conf\n          contents: |\n            [Service]\n            LimitNOFILE=%d\n", 1024+i)
	}
	return c.n, nil
}
