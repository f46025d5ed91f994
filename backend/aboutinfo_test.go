package backend_test

import (
	"context"
	"testing"

	"talaria/backend"
	"talaria/backend/about"
	"talaria/backend/vault"
	"talaria/internal/testwait"
)

func TestAbout(t *testing.T) {
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: t.TempDir(), Version: "1.2.3",
		Commit: "abc1234", BuildDate: "2026-12-01T10:00:00Z", SidecarCommand: "/nonexistent", Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
		defer cancel()
		svc.Close(ctx)
	}()
	a := svc.About().About()
	if a.Version != "1.2.3" || a.Commit != "abc1234" || a.BuildDate != "2026-12-01T10:00:00Z" || a.Error != "" ||
		a.Paths.LogDir != svc.Paths.LogDir || a.GoVersion == "" || a.Platform == "" {
		t.Fatalf("%+v", a)
	}
	libs, _ := about.Libraries()
	if len(a.Libraries) != len(libs) || len(libs) < 20 {
		t.Fatalf("%d libraries listed, %d in the notice", len(a.Libraries), len(libs))
	}
	text, err := svc.About().LicenseText("npm", "svelte")
	if err != nil || text == "" {
		t.Fatalf("svelte licence: %v", err)
	}
	if _, err := svc.About().LicenseText("npm", "left-pad"); err == nil {
		t.Fatal("a library that is not bundled has a licence text")
	}
}
