package main

import (
	"flag"
	"io"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/cloudconfig"
)

const cloudConfigUsage = "usage: flint cloud-config [-o FILE] [-spec 3.x.0] [-default-user NAME] [-allow-incomplete] FILE (- for stdin)"

// runCloudConfig translates cloud-init user-data into a config
// (runMigration): the report counts what became of each top-level key.
func runCloudConfig(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return runMigration(cloudConfigMigration(), args, stdin, stdout, stderr)
}

// cloudConfigMigration is flint cloud-config: its options, and the
// translation.
func cloudConfigMigration() migration {
	return migration{
		name: "cloud-config", usage: cloudConfigUsage, input: "user-data file", items: "keys",
		untranslatable: cloudconfig.ErrUntranslatable,
		flags: func(fs *flag.FlagSet) translation {
			user := fs.String("default-user", "core", "the distro's default user `NAME`, who gets the top-level ssh_authorized_keys")
			return func(name string, raw []byte, v config.Version) ([]byte, string, error) {
				res, err := cloudconfig.Translate(name, raw, cloudconfig.Options{Version: v, DefaultUser: *user})
				return res.Config, res.Report.String(), err
			}
		},
	}
}
