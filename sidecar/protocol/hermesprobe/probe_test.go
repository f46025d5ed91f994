package hermesprobe

import "testing"

func TestVersionLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{{"0.9.1", "0.11.0", true}, {"0.11.0", "0.11.0", false}, {"0.19.0", "0.11.0", false}, {"0.22.2.post1", "0.19.0", false},
		{"0.10", "0.11.0", true}, {"3.9.2", "3.11", true}, {"3.14.0rc1", "3.11", false}} {
		if got := VersionLess(c.a, c.b); got != c.less {
			t.Errorf("VersionLess(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
