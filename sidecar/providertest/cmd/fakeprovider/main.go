// Command fakeprovider runs the scripted OpenAI-compatible provider of package
// providertest for manual runs and browser tests. With an empty queue it answers every
// chat request with "You said: <last user message>".
//
//	go run ./sidecar/providertest/cmd/fakeprovider --addr 127.0.0.1:11999 --script turns.json
//
// The script is a JSON array of turns (see providertest.LoadScript), consumed in order
// before the echo answers start. The control API under /_control/ (see
// providertest's control.go) scripts it while it runs; --split-aux keeps non-streaming
// requests (titles) off the scripted queue; --addr 127.0.0.1:0 picks a free port and
// --url-file writes the base URL to a file once it listens.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"talaria/sidecar/providertest"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("fakeprovider", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:11999", "listen address (host:port)")
	script := fs.String("script", "", "JSON file of scripted turns, served first (optional)")
	models := fs.String("models", "scripted-model", "comma-separated model ids listed by GET /v1/models")
	splitAux := fs.Bool("split-aux", false, "non-streaming requests (titles) use their own queue (/_control/aux), not the scripted turns")
	urlFile := fs.String("url-file", "", "write the base URL (http://host:port/v1) to this file once listening")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var turns []providertest.Turn
	if *script != "" {
		f, err := os.Open(*script)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeprovider:", err)
			return 1
		}
		turns, err = providertest.LoadScript(f)
		f.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeprovider:", err)
			return 1
		}
	}
	s, err := providertest.Listen(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeprovider:", err)
		return 1
	}
	defer s.Close()
	s.SetModels(strings.Split(*models, ",")...)
	s.SplitAux(*splitAux)
	s.Enqueue(turns...)
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(s.BaseURL()+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fakeprovider:", err)
			return 1
		}
	}
	fmt.Fprintf(os.Stderr, "fakeprovider: serving %s (%d scripted turns, then echo); Ctrl-C stops\n", s.BaseURL(), len(turns))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	return 0
}
