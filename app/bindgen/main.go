// Command bindgen writes frontend/src/lib/bindings.gen.ts, the typed bindings of the
// services app binds to the window (contract.GenerateBindings of app.Services). `make
// bindings` runs it.
//
//	go run -tags sqlite_fts5 ./app/bindgen [-o path]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"talaria/app"
	"talaria/backend/contract"
)

func main() {
	out := flag.String("o", filepath.Join(contract.ModuleRoot(), contract.BindingsFile), "file to write")
	flag.Parse()
	b, err := contract.GenerateBindings(app.ServicesOf(&app.App{}).Bound())
	if err == nil {
		err = os.WriteFile(*out, append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bindgen:", err)
		os.Exit(1)
	}
}
