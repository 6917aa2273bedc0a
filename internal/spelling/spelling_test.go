package spelling

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3},
		{"fail-on", "fail-on", 0}, {"fial-on", "fail-on", 2},
		{"ownnamespace", "OwnNamespace", 2}, {"kitten", "sitting", 3},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	cands := []string{"fail-on", "output", "select", "OPM_FAIL_ON", "ab", "aa"}
	for word, want := range map[string]string{
		"fial-on":     "fail-on",
		"OPM_FAIL_NO": "OPM_FAIL_ON",
		"zzzzzz":      "",
		"ac":          "aa", // aa and ab are both one edit away: the first in order wins
	} {
		if got := Nearest(word, cands, 3); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", word, got, want)
		}
	}
}
