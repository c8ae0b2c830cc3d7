// Command gen writes a large, valid spec 3.4.0 config for benchmarking
// `flint validate`: 5,000 files with verified data URLs in 50 directories,
// 100 links, 200 systemd units and 50 users with SSH keys, about 2.6 MB of
// JSON. The output depends only on the fixed seed, so every run and every
// machine measures the same bytes.
//
// Two more shapes stress the parser's memory (run.sh's memory series):
// -files N writes N small files (path, mode and a short data URL, about 84
// bytes of JSON each: 500,000 make 42 MB), and -nested BYTES writes about
// that many bytes of arrays nested 50 deep under a key the spec does not
// have (valid, with one warning): two bytes of input for every value.
//
// Usage:
//
//	go run ./tests/bench/gen [-o FILE] [-files N | -nested BYTES]
//
// It prints the config's size to stderr.
package main

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

// The shape of the config. Changing any of these changes what the recorded
// reference figures in run.sh mean.
const (
	seed        = 20240601
	nDirs       = 50
	nFiles      = 5000
	linesPer    = 20
	nLinks      = 100
	nUnits      = 200
	enableEvery = 3 // every third unit is enabled
	nUsers      = 50
)

// The config model, only as much of it as the generator writes. Field order
// is the order keys appear in the output.
type config struct {
	Ignition ignition `json:"ignition"`
	Storage  storage  `json:"storage"`
	Systemd  systemd  `json:"systemd"`
	Passwd   passwd   `json:"passwd"`
}

type ignition struct {
	Version string `json:"version"`
}

type storage struct {
	Directories []directory `json:"directories"`
	Files       []file      `json:"files"`
	Links       []link      `json:"links"`
}

type directory struct {
	Path string `json:"path"`
	Mode int    `json:"mode"`
}

type file struct {
	Path     string   `json:"path"`
	Mode     int      `json:"mode"`
	Contents resource `json:"contents"`
}

type resource struct {
	Source       string       `json:"source"`
	Verification verification `json:"verification"`
}

type verification struct {
	Hash string `json:"hash"`
}

type link struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

type systemd struct {
	Units []unit `json:"units"`
}

type unit struct {
	Name     string `json:"name"`
	Enabled  *bool  `json:"enabled,omitempty"`
	Contents string `json:"contents"`
}

type passwd struct {
	Users []user `json:"users"`
}

type user struct {
	Name              string   `json:"name"`
	UID               int      `json:"uid"`
	Groups            []string `json:"groups,omitempty"`
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys"`
}

func main() {
	out := flag.String("o", "-", "write the config to `FILE` (- is stdout)")
	files := flag.Int("files", 0, "write `N` small files instead of the benchmark config")
	nested := flag.Int("nested", 0, "write about `BYTES` of nested arrays instead of the benchmark config")
	flag.Parse()
	if flag.NArg() != 0 || *files < 0 || *nested < 0 || *files > 0 && *nested > 0 {
		fmt.Fprintln(os.Stderr, "usage: gen [-o FILE] [-files N | -nested BYTES]")
		os.Exit(2)
	}
	var err error
	switch {
	case *files > 0:
		err = output(*out, manyFiles(*files), fmt.Sprintf("%d small files", *files))
	case *nested > 0:
		err = output(*out, nestedArrays(*nested), "nested arrays")
	default:
		err = write(*out)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
}

func write(name string) error {
	raw, err := json.Marshal(generate(rand.New(rand.NewPCG(seed, seed))))
	if err != nil {
		return err
	}
	raw = append(raw, '\n')
	return output(name, raw, fmt.Sprintf("%d files in %d directories, %d links, %d units, %d users",
		nFiles, nDirs, nLinks, nUnits, nUsers))
}

// output writes raw to the file name (- is stdout) and its size and what
// it holds to stderr.
func output(name string, raw []byte, what string) error {
	var err error
	if name == "-" {
		_, err = os.Stdout.Write(raw)
	} else {
		err = os.WriteFile(name, raw, 0o644)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: %d bytes (%.2f MB): %s\n", len(raw), float64(len(raw))/1e6, what)
	return nil
}

// manyFiles is a config of n small files in 1,000 directories, written
// directly rather than through encoding/json: 500,000 of them would cost
// the generator more memory than the validator it measures.
func manyFiles(n int) []byte {
	b := []byte(`{"ignition":{"version":"3.4.0"},"storage":{"files":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',', '\n')
		}
		b = fmt.Appendf(b, `{"path":"/srv/stress/d%03d/f%07d","mode":420,"contents":{"source":"data:,%d"}}`,
			i%1000, i, i)
	}
	return append(b, "]}}\n"...)
}

// nestedArrays is a config with about size bytes of arrays nested depth
// deep, under a key no spec version has: every value is two bytes of
// input, the worst case for a parser that builds a tree.
func nestedArrays(size int) []byte {
	const depth = 50
	b := []byte(`{"ignition":{"version":"3.4.0"},"x-stress":[`)
	for first := true; len(b) < size; first = false {
		if !first {
			b = append(b, ',')
		}
		for range depth {
			b = append(b, '[')
		}
		for range depth {
			b = append(b, ']')
		}
	}
	return append(b, "]}\n"...)
}

func generate(rng *rand.Rand) config {
	cfg := config{Ignition: ignition{Version: "3.4.0"}}

	dirs := make([]string, nDirs)
	for i := range dirs {
		dirs[i] = fmt.Sprintf("/srv/bench/d%02d", i)
		cfg.Storage.Directories = append(cfg.Storage.Directories, directory{Path: dirs[i], Mode: 0o755})
	}

	paths := make([]string, nFiles)
	for i := range paths {
		paths[i] = fmt.Sprintf("%s/f%04d.conf", dirs[i%nDirs], i)
		data := textContents(rng)
		sum := sha512.Sum512(data)
		cfg.Storage.Files = append(cfg.Storage.Files, file{
			Path: paths[i],
			Mode: 0o644,
			Contents: resource{
				Source:       "data:;base64," + base64.StdEncoding.EncodeToString(data),
				Verification: verification{Hash: "sha512-" + hex.EncodeToString(sum[:])},
			},
		})
	}

	for i := 0; i < nLinks; i++ {
		cfg.Storage.Links = append(cfg.Storage.Links, link{
			Path:   fmt.Sprintf("/srv/bench/links/l%03d.conf", i),
			Target: paths[rng.IntN(len(paths))],
		})
	}

	for i := 0; i < nUnits; i++ {
		u := unit{Name: fmt.Sprintf("bench-%03d.service", i), Contents: unitContents(i, rng)}
		if i%enableEvery == 0 {
			enabled := true
			u.Enabled = &enabled
		}
		cfg.Systemd.Units = append(cfg.Systemd.Units, u)
	}

	for i := 0; i < nUsers; i++ {
		u := user{Name: fmt.Sprintf("user%02d", i), UID: 2000 + i}
		if i%5 == 0 {
			u.Groups = []string{"wheel"}
		}
		for k := 0; k < 1+i%2; k++ {
			u.SSHAuthorizedKeys = append(u.SSHAuthorizedKeys, ed25519Key(rng, fmt.Sprintf("%s@host%d", u.Name, k)))
		}
		cfg.Passwd.Users = append(cfg.Passwd.Users, u)
	}
	return cfg
}

var words = []string{"opt", "max", "min", "ttl", "log", "dir", "key", "id", "mode", "port"}

// textContents is a small settings file: linesPer lines of key=value.
func textContents(rng *rand.Rand) []byte {
	var b strings.Builder
	for i := 0; i < linesPer; i++ {
		fmt.Fprintf(&b, "%s%d=%x\n", words[rng.IntN(len(words))], i, rng.Uint32()&0xfff)
	}
	return []byte(b.String())
}

func unitContents(i int, rng *rand.Rand) string {
	return fmt.Sprintf(`[Unit]
Description=Benchmark service %d
After=network-online.target

[Service]
Type=oneshot
ExecStart=/usr/bin/true --instance %d --token %08x
RemainAfterExit=yes

[Install]
WantedBy=multi-user.target
`, i, i, rng.Uint32())
}

// ed25519Key returns an authorized_keys line whose blob is laid out as a real
// ed25519 public key (RFC 8709): the key type and 32 key bytes, each with a
// length prefix.
func ed25519Key(rng *rand.Rand, comment string) string {
	const keyType = "ssh-ed25519"
	blob := binary.BigEndian.AppendUint32(nil, uint32(len(keyType)))
	blob = append(blob, keyType...)
	blob = binary.BigEndian.AppendUint32(blob, 32)
	for i := 0; i < 4; i++ {
		blob = binary.LittleEndian.AppendUint64(blob, rng.Uint64())
	}
	return keyType + " " + base64.StdEncoding.EncodeToString(blob) + " " + comment
}
