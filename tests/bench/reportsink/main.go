// Command reportsink is the collector of the report benchmark
// (tests/bench/reportbench.sh): it listens on 127.0.0.1 (a QEMU guest on
// the user network reaches it at 10.0.2.2), takes the first-boot reports
// POSTed to /report with 200 OK, and prints one line per report, its
// arrival time and size, to standard output. It prints its port on the
// first line and serves until killed.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: reportsink")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "reportsink:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/report" {
			http.NotFound(w, r)
			return
		}
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Printf("report %d bytes at %s\n", n, time.Now().UTC().Format(time.RFC3339Nano))
	})
	if err := http.Serve(ln, h); err != nil {
		fmt.Fprintln(os.Stderr, "reportsink:", err)
		os.Exit(1)
	}
}
