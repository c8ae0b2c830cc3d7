package config

import (
	"regexp"
	"testing"
)

// TestValidGUID checks validGUID against the pattern Ignition's
// validation uses.
func TestValidGUID(t *testing.T) {
	re := regexp.MustCompile(`^(|[[:xdigit:]]{8}-[[:xdigit:]]{4}-[[:xdigit:]]{4}-[[:xdigit:]]{4}-[[:xdigit:]]{12})$`)
	for _, s := range []string{
		"", "0FC63DAF-8483-4772-8E79-3D69D8477DE4", "0fc63daf-8483-4772-8e79-3d69d8477de4",
		"0FC63DAF-8483-4772-8E79-3D69D8477DE", "0FC63DAF-8483-4772-8E79-3D69D8477DE44",
		"0FC63DAF84834772-8E79-3D69D8477DE4-", "0FC63DAG-8483-4772-8E79-3D69D8477DE4",
		"0FC63DAF-8483-4772-8E79_3D69D8477DE4", "-", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz",
		"0FC63DAF-8483-4772-8E79-3D69D8477DÉ", "00000000-0000-0000-0000-000000000000",
	} {
		if got, want := validGUID(s), re.MatchString(s); got != want {
			t.Errorf("validGUID(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzValidGUID(f *testing.F) {
	re := regexp.MustCompile(`^(|[[:xdigit:]]{8}-[[:xdigit:]]{4}-[[:xdigit:]]{4}-[[:xdigit:]]{4}-[[:xdigit:]]{12})$`)
	f.Add("0FC63DAF-8483-4772-8E79-3D69D8477DE4")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validGUID(s), re.MatchString(s); got != want {
			t.Errorf("validGUID(%q) = %v, want %v", s, got, want)
		}
	})
}
