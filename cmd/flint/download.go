package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/flintboot/flint/internal/flags"
	"github.com/flintboot/flint/internal/install"
	"github.com/flintboot/flint/internal/oplog"
)

// downloadCommand is `download`, in coreos-installer's words
// (src/cmdline/mod.rs, DownloadConfig).
var downloadCommand = &flags.Command{Name: "download", About: "Download a CoreOS image", Options: []flags.Option{
	{Long: "stream", Short: 's', Value: "name", Default: "stable", Help: "Fedora CoreOS stream"},
	{Long: "architecture", Short: 'a', Value: "name", Default: install.HostArchitecture(), Help: "Target CPU architecture"},
	{Long: "platform", Short: 'p', Value: "name", Default: "metal", Help: "Fedora CoreOS platform name"},
	{Long: "format", Short: 'f', Value: "name", Default: "raw.xz", Help: "Image format"},
	{Long: "image-url", Short: 'u', Value: "URL", Help: "Manually specify the image URL"},
	{Long: "directory", Short: 'C', Value: "path", Default: ".", Help: "Destination directory"},
	{Long: "decompress", Short: 'd', Help: "Decompress image and don't save signature"},
	{Long: "insecure", Help: "Allow unsigned image"},
	{Long: "stream-base-url", Value: "URL", Help: "Base URL for Fedora CoreOS stream metadata"},
	{Long: "fetch-retries", Value: "N", Default: "0", Help: "Fetch retries, or \"infinite\""},
}}

// runDownload is `download`: a stream's artifacts (or --image-url's), each
// checked against its signature as flint install checks an image, into a
// directory; each file's path on stdout (src/download.rs, download).
func runDownload(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p, err := parseCmd(ctx, downloadCommand, args, stdout, stderr)
	if p == nil {
		return err
	}
	retries, err := install.ParseRetries(p.String("fetch-retries"))
	if err != nil {
		return fmt.Errorf("download: --fetch-retries: %w", err)
	}
	arch := p.String("architecture")
	o := install.DownloadOptions{
		Stream: p.String("stream"), Architecture: arch, Platform: p.String("platform"), Format: p.String("format"),
		StreamBaseURL: p.String("stream-base-url"), ImageURL: p.String("image-url"), Directory: p.String("directory"),
		Decompress: p.Bool("decompress"), Insecure: p.Bool("insecure"), FetchRetries: retries,
	}
	deps := install.Deps{Log: slog.New(oplog.NewTextHandler(stderr, slog.LevelInfo))}
	return install.Download(ctx, o, deps, func(path string) { fmt.Fprintln(stdout, path) })
}
