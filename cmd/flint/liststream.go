package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/flintboot/flint/internal/flags"
	"github.com/flintboot/flint/internal/install"
	"github.com/flintboot/flint/internal/stream"
)

// listStreamCommand is `list-stream`, in coreos-installer's words
// (src/cmdline/mod.rs, ListStreamConfig).
var listStreamCommand = &flags.Command{Name: "list-stream", About: "List available images in a Fedora CoreOS stream", Options: []flags.Option{
	{Long: "stream", Short: 's', Value: "name", Default: "stable", Help: "Fedora CoreOS stream"},
	{Long: "stream-base-url", Value: "URL", Help: "Base URL for Fedora CoreOS stream metadata"},
}}

// runListStream is `list-stream`: every architecture, platform and format
// of a stream's current release, as a table (src/source.rs, list_stream).
func runListStream(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p, err := parseCmd(ctx, listStreamCommand, args, stdout, stderr)
	if p == nil {
		return err
	}
	s, err := install.FetchStream(ctx, p.String("stream"), p.String("stream-base-url"), install.Deps{Proxy: install.ProxyFromEnv(os.Getenv)})
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(stdout, stream.Table(s.Rows()))
	return err
}
