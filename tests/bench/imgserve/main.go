// Command imgserve serves a directory over HTTP on 127.0.0.1 for the
// install benchmark (tests/bench/install.sh): it prints its base URL on
// the first line of standard output and serves until killed.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: imgserve DIR")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "imgserve:", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/\n", ln.Addr())
	if err := http.Serve(ln, http.FileServer(http.Dir(os.Args[1]))); err != nil {
		fmt.Fprintln(os.Stderr, "imgserve:", err)
		os.Exit(1)
	}
}
