package blackbox

import (
	"testing"
)

// hardeningCases are configs an adversarial review found to do harm
// (issue 18): each must be refused, or applied without the harm.
func hardeningCases() []filesCase {
	return []filesCase{
		// Ids the kernel cannot hold: 4294967296 would become root's 0.
		{Name: "hardening.id.file.wraps",
			Config:   storage(`{"files":[{"path":"/foo/bar","user":{"id":4294967296},"group":{"id":4294967297},"contents":{"source":"data:,x"}}]}`),
			WantFail: "user id 4294967296 is out of range: it must be between 0 and 4294967294",
			Out:      []fnode{{Path: "foo/bar", Kind: "absent"}}},
		{Name: "hardening.id.negative",
			Config:   storage(`{"directories":[{"path":"/d","user":{"id":-5}}]}`),
			WantFail: "user id -5 is out of range",
			Out:      []fnode{{Path: "d", Kind: "absent"}}},
		{Name: "hardening.id.passwd.wraps",
			Config:   passwdCfg(`{"users":[{"name":"core","uid":4294967296}],"groups":[{"name":"g","gid":4294967295}]}`),
			WantFail: "uid 4294967296 is out of range",
			Check: func(t *testing.T, root string) {
				if f := passwdEntry(t, root, "etc/passwd", "core"); f != nil {
					t.Errorf("the user was created: %q", f)
				}
			}},
		{Name: "hardening.id.largest",
			Config: storage(`{"files":[{"path":"/foo/bar","user":{"id":4294967294},"group":{"id":4294967294},"contents":{"source":"data:,x"}}]}`),
			Out:    []fnode{{Path: "foo/bar", Contents: "x", Owner: "4294967294:4294967294"}}},

		// A unit name that would put a second line into the preset file.
		{Name: "hardening.unit.name.newline",
			Config:   systemdCfg(`{"units":[{"name":"evil.service\nenable sshd.service","enabled":true}]}`),
			WantFail: `invalid unit name \"evil.service\\nenable sshd.service\": character '\\n' is not allowed`,
			Out:      []fnode{{Path: presetFile, Kind: "absent"}}},
		{Name: "hardening.unit.name.space",
			Config:   systemdCfg(`{"units":[{"name":"a b.service","contents":"[Unit]\n"}]}`),
			WantFail: `character ' ' is not allowed`,
			Out:      []fnode{{Path: unitDir + "a b.service", Kind: "absent"}}},
		{Name: "hardening.dropin.name.control",
			Config:   systemdCfg(`{"units":[{"name":"a.service","dropins":[{"name":"x\ty.conf","contents":"[Unit]\n"}]}]}`),
			WantFail: `control character '\\t' is not allowed`,
			Out:      []fnode{{Path: unitDir + "a.service.d", Kind: "absent"}}},
		{Name: "hardening.unit.name.escaped",
			Config: systemdCfg(`{"units":[{"name":"dev-disk-by\\x2dlabel-data.mount","enabled":true,"contents":"[Mount]\nWhat=/dev/disk/by-label/data\nWhere=/data\n[Install]\nWantedBy=local-fs.target\n"}]}`),
			Out: []fnode{{Path: unitDir + `dev-disk-by\x2dlabel-data.mount`, Kind: "exists"},
				{Path: presetFile, Contents: "enable dev-disk-by\\x2dlabel-data.mount\n"}}},
	}
}

func TestFilesHardening(t *testing.T) {
	requireFilesTier(t)
	bin := buildFlint(t)
	srv := filesServers(t)
	for _, c := range hardeningCases() {
		for _, v := range c.versions() {
			t.Run(c.Name+"/"+v.String(), func(t *testing.T) {
				t.Parallel()
				runFilesCase(t, bin, c, v, srv)
			})
		}
	}
}
