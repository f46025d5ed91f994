// Command tsgen writes frontend/src/lib/protocol.gen.ts, the TypeScript of the Go/window
// contract declared in backend/contract. `make bindings` runs it.
//
//	go run -tags sqlite_fts5 ./backend/contract/tsgen [-o path]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"talaria/backend/contract"
)

func main() {
	out := flag.String("o", filepath.Join(contract.ModuleRoot(), contract.GeneratedFile), "file to write")
	flag.Parse()
	b, err := contract.GenerateTypeScript()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tsgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "tsgen:", err)
		os.Exit(1)
	}
}
