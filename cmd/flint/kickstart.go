package main

import (
	"flag"
	"io"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/kickstart"
)

const kickstartUsage = "usage: flint kickstart [-o FILE] [-spec 3.x.0] [-allow-incomplete] FILE (- for stdin)"

// runKickstart translates a kickstart file into a config (runMigration):
// the report counts what became of each command.
func runKickstart(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return runMigration(kickstartMigration(), args, stdin, stdout, stderr)
}

// kickstartMigration is flint kickstart: its options, and the translation.
func kickstartMigration() migration {
	return migration{
		name: "kickstart", usage: kickstartUsage, input: "kickstart file", items: "lines",
		untranslatable: kickstart.ErrUntranslatable,
		flags: func(*flag.FlagSet) translation {
			return func(name string, raw []byte, v config.Version) ([]byte, string, error) {
				res, err := kickstart.Translate(name, raw, kickstart.Options{Version: v})
				return res.Config, res.Report.String(), err
			}
		},
	}
}
