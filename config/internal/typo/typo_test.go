package typo

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"mode", "path", "contents", "overwrite", "filesystem"}
	for key, want := range map[string]string{
		"mod": "mode", "Mode": "mode", "contnets": "contents", "filesytem": "filesystem",
		"xyz": "", "overwritten": "overwrite", "pth": "path", "modes": "mode", "mo": "",
	} {
		if got := Closest(key, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", key, got, want)
		}
	}
}
