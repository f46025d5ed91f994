package store

import "testing"

func TestSettings(t *testing.T) {
	s := openTest(t)
	steps := []struct {
		set       *[2]string // key, value to write first; nil: none
		key       string
		wantValue string
		wantOK    bool
	}{
		{nil, "theme", "", false},
		{&[2]string{"theme", "dark"}, "theme", "dark", true},
		{&[2]string{"theme", "light"}, "theme", "light", true},
		{&[2]string{"empty", ""}, "empty", "", true},
		{nil, "other", "", false},
	}
	for _, st := range steps {
		if st.set != nil {
			if err := s.SetSetting(t.Context(), st.set[0], st.set[1]); err != nil {
				t.Fatal(err)
			}
		}
		v, ok, err := s.Setting(t.Context(), st.key)
		if err != nil || v != st.wantValue || ok != st.wantOK {
			t.Errorf("Setting(%q) = %q, %v, %v; want %q, %v", st.key, v, ok, err, st.wantValue, st.wantOK)
		}
	}
}
