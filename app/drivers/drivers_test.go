package drivers

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"

	"talaria/app"
)

// A benchmark setting that is not a whole number, or is below its floor, is refused
// with the variable's name, not silently read as the default.
func TestBenchEnvIntRefusesBadValues(t *testing.T) {
	t.Setenv("TALARIA_BENCH_TURNS", "")
	if v, err := benchEnvInt("TALARIA_BENCH_TURNS", 200, 20); err != nil || v != 200 {
		t.Fatalf("unset: %d %v", v, err)
	}
	t.Setenv("TALARIA_BENCH_TURNS", "60")
	if v, err := benchEnvInt("TALARIA_BENCH_TURNS", 200, 20); err != nil || v != 60 {
		t.Fatalf("60: %d %v", v, err)
	}
	for _, bad := range []string{"ten", "10", "-1", "1e3", " 50"} {
		t.Setenv("TALARIA_BENCH_TURNS", bad)
		if _, err := benchEnvInt("TALARIA_BENCH_TURNS", 200, 20); err == nil || !strings.Contains(err.Error(), "TALARIA_BENCH_TURNS") {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

// talaria-drivers' help lists the drivers' options with the app's, and every scenario;
// --selftest asks for a driver, its absence for none.
func TestOptionsJoinTheCommandLine(t *testing.T) {
	var out bytes.Buffer
	var o *Options
	_, code, done := app.ParseCommandLine([]string{"--help"}, app.BuildInfo{}, &out, io.Discard, func(fs *flag.FlagSet) { o = AddFlags(fs) })
	if !done || code != 0 {
		t.Fatalf("--help: done %v code %d", done, code)
	}
	for _, want := range append([]string{"--selftest", "--screenshot=FILE", "--scenario=NAME", "--data-dir=DIR", "--new-chat"}, Scenarios...) {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the help does not name %s:\n%s", want, out.String())
		}
	}
	cl, _, done := app.ParseCommandLine([]string{"--selftest", "--scenario", "vault", "--data-dir", "/d"}, app.BuildInfo{}, io.Discard, io.Discard, func(fs *flag.FlagSet) { o = AddFlags(fs) })
	if done || cl.DataDir != "/d" {
		t.Fatalf("parsed %+v done %v", cl, done)
	}
	if d := o.Driver(); d == nil || d.opts.Scenario != "vault" {
		t.Fatalf("driver %+v", d)
	}
	app.ParseCommandLine(nil, app.BuildInfo{}, io.Discard, io.Discard, func(fs *flag.FlagSet) { o = AddFlags(fs) })
	if d := o.Driver(); d != nil || o.Scenario != "chat" {
		t.Fatalf("without --selftest: driver %+v, scenario %q", d, o.Scenario)
	}
}
