package dist

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestSELinuxPolicyNames keeps dist/selinux in step with what is
// installed: flint.fc labels the binary where make install puts it, and
// the domain flint-installer.service asks for is one flint.te declares and
// lets flint's executable enter. (make selinux compiles the module.)
func TestSELinuxPolicyNames(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	te, fc := read("selinux/flint.te"), read("selinux/flint.fc")
	manifest := read(manifestFile)

	m := regexp.MustCompile(`(?m)^(/\S+)\s+--\s+gen_context\(system_u:object_r:flint_exec_t,s0\)$`).FindStringSubmatch(fc)
	if m == nil {
		t.Fatalf("flint.fc labels no file flint_exec_t")
	}
	if !strings.Contains(manifest, "\nfile 0755 "+m[1]+"\n") {
		t.Errorf("flint.fc labels %s flint_exec_t, which make install does not write (%s)", m[1], manifestFile)
	}

	unit := read("../dracut/systemd/flint-installer.service")
	c := regexp.MustCompile(`(?m)^SELinuxContext=-?system_u:system_r:(\w+):s0$`).FindStringSubmatch(unit)
	if c == nil {
		t.Fatalf("flint-installer.service sets no SELinuxContext=")
	}
	for _, want := range []string{
		"\ntype " + c[1] + ";\n",
		"\ndomain_entry_file(" + c[1] + ", flint_exec_t)\n",
		"\nallow init_t " + c[1] + ":process transition;\n",
	} {
		if !strings.Contains(te, want) {
			t.Errorf("flint.te lacks %q, for flint-installer.service's SELinuxContext=%s", strings.TrimSpace(want), c[1])
		}
	}
	if !strings.Contains(te, "\ninit_daemon_domain(flint_t, flint_exec_t)\n") {
		t.Errorf("flint.te: systemd does not start flint in flint_t")
	}
}
