# Talaria Desktop. `make run` and `make test` are the whole set-up on a fresh Debian 12
# machine: each runs `make setup` first (fast when nothing is missing).
SHELL   := /bin/bash
GO      ?= go
TAGS    := sqlite_fts5
# The Linux release links the system's SQLite (libsqlite3.so.0, a dependency of the
# .deb; Debian's policy on convenience copies) instead of go-sqlite3's bundled copy:
# 1.4 MB less in the binary. Tests and `wails dev` use the bundled copy; the store's
# tests run against the system's too (test-go). Windows keeps the bundled copy.
RELEASE_TAGS := desktop,production,$(TAGS),libsqlite3
VERSION    ?= $(shell scripts/buildinfo.sh version)
COMMIT     ?= $(shell scripts/buildinfo.sh commit)
BUILD_DATE ?= $(shell scripts/buildinfo.sh date)
BIN     := build/bin/talaria
# The sidecar alone, without cgo (cmd/talaria-sidecar): the agent process the app starts
# (the release binary does not link it) and what Talaria copies to remote hosts.
SIDECAR := build/bin/talaria-sidecar
# The same app with the test and benchmark drivers (app/drivers: --selftest, --scenario,
# --screenshot) for smoke, screenshots, bench and pkgtest; never installed nor packaged.
# Like the release, it starts its agent process from talaria-sidecar beside it
# ($(DRIVERS)-sidecar; remote.SidecarBinary), built with it.
DRIVERS := build/bin/talaria-drivers
WAILS   := $(CURDIR)/tools/bin/wails
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.buildDate=$(BUILD_DATE)
export CGO_ENABLED := 1
# go.mod's toolchain line names the Go release with the security fixes (issue 23); Debian's
# and go.dev's Go ship GOTOOLCHAIN=local in their go.env, which ignores it. `auto` lets
# the go command fetch that release from the module proxy once, when the local one is older.
export GOTOOLCHAIN ?= auto

.PHONY: setup setup-app build build-only build-drivers build-drivers-only run test vet lint lint-static vulncheck test-go test-stress test-window-only test-frontend test-window smoke bench bench-store soak screenshots dev bindings clean \
	man install install-only uninstall desktopcheck notices notices-check windows windows-only platforms platforms-only \
	package package-only pkgtest pkgtest-only adversarial adversarial-baseline

# `make setup` installs everything the tests need; `setup-app` only what building and
# running the app needs (what `make run`, `make build` and `make dev` use).
setup:
	@scripts/setup.sh

setup-app:
	@scripts/setup.sh --app

build: setup-app
	@$(MAKE) --no-print-directory build-only

# The release embeds the picture of a fresh data folder's first screen that a window of
# this very build kept (app/baked/README.md): the drivers binary is built first to take it.
build-only:
	cd frontend && npm run build
	rm -f app/baked/first-screen.html
	$(GO) build -trimpath -buildmode=pie -tags "$(RELEASE_TAGS),drivers" -ldflags "-w -s $(LDFLAGS)" -o $(DRIVERS) .
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-w -s -X main.version=$(VERSION)" -o $(DRIVERS)-sidecar ./cmd/talaria-sidecar
	scripts/bake-first-screen.sh $(DRIVERS) app/baked/first-screen.html
	$(GO) build -trimpath -buildmode=pie -tags "$(RELEASE_TAGS)" -ldflags "-w -s $(LDFLAGS)" -o $(BIN) .
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-w -s -X main.version=$(VERSION)" -o $(SIDECAR) ./cmd/talaria-sidecar

# talaria-drivers: main with the build tag drivers (main's drivers.go links app/drivers).
# It embeds the same frontend/dist as the release binary (built by build-only), and the
# first-screen picture: build-only's drivers binary took it, so this one is linked again
# after it, as the release is, and its fresh starts paint what the release's do.
build-drivers: setup-app
	@$(MAKE) --no-print-directory build-only build-drivers-only
build-drivers-only:
	@[ -s frontend/dist/index.html ] || { cd frontend && npm run build; }
	$(GO) build -trimpath -buildmode=pie -tags "$(RELEASE_TAGS),drivers" -ldflags "-w -s $(LDFLAGS)" -o $(DRIVERS) .
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-w -s -X main.version=$(VERSION)" -o $(DRIVERS)-sidecar ./cmd/talaria-sidecar

run: build
	./$(BIN)

# Every stage runs even when an earlier one failed, then a table of each stage's result
# and time (build/test/summary.txt); exits non-zero if any failed. scripts/test.sh names
# the stages; `scripts/test.sh go frontend` runs only those.
test: setup
	@scripts/test.sh

vet:
	$(GO) vet -tags $(TAGS) ./...
	$(GO) vet -tags $(TAGS),drivers . # main as talaria-drivers links it (drivers.go)

test-go:
	$(GO) test -race -tags $(TAGS) -timeout 20m ./...
	$(GO) test -tags $(TAGS),libsqlite3 -timeout 20m ./backend/store/ ./backend/history/ # the SQLite the release links

# staticcheck (issue 11), pinned in tools/staticcheck, built by setup; the checks are in
# staticcheck.conf. Part of `make test`.
STATICCHECK := tools/bin/staticcheck
$(STATICCHECK): tools/staticcheck/go.mod
	cd tools/staticcheck && $(GO) build -o ../bin/staticcheck honnef.co/go/tools/cmd/staticcheck
lint: lint-static vulncheck
lint-static: $(STATICCHECK)
	$(STATICCHECK) -tags $(TAGS) ./...

# govulncheck (issue 23): no known vulnerability reachable from our code. It and the
# database it reads are pinned in tools/govulncheck; scripts/vulndb.sh builds both (the
# database from the module proxy's golang.org/x/vulndb, as vuln.go.dev is unreachable).
vulncheck:
	db=$$(scripts/vulndb.sh) && tools/bin/govulncheck -db "file://$$db" -tags $(TAGS) ./...

# The suite under load (issue 23): go test -race -count=3 and vitest three times while a
# busy loop per core runs; prints the failures (build/stress/summary.txt). STRESS_COUNT,
# STRESS_PKGS change the runs and packages. `scripts/test-stress.sh --load-only` is the
# load alone, to run beside another `make test`.
test-stress: setup
	scripts/test-stress.sh

test-frontend:
	cd frontend && npm run check && npm test

# The window tests: ONE `wails dev` under Xvfb (own data folder, the scripted provider)
# and every Playwright spec in frontend/e2e/ against it (frontend/e2e/README.md).
# SPEC=name runs the specs matching name only.
test-window: setup
	@$(MAKE) --no-print-directory test-window-only
test-window-only:
	scripts/window-test.sh $(SPEC)

# The self-test (talaria-drivers), then the release binary's quit/kill/close/
# single-instance process checks (no tray host) and the tray with a tray host (trayer).
smoke:
	scripts/smoke.sh
	scripts/orphan.sh
	scripts/traycheck.sh

# ---- perf (issue 16): benchmarks ------------------------------------------------------
# The Go benchmarks (the 100k-token stream through the host beside the design's minimum;
# the store at 10,000 sessions / 1,000,000 messages beside plain SQL), then the window
# benchmark: the real binary in WebKitGTK under Xvfb beside a bare Wails app, the same
# run (bench/webkit.sh, driving talaria-drivers). The generated 1M-message database is
# kept in BENCH_DIR. BEFORE=/path/to/older/talaria-drivers (or a talaria from before
# issue 25, which had the drivers built in) adds an older build as a column of the
# window table.
BENCH_DIR ?= $(or $(TALARIA_BENCH_DIR),$(HOME)/.cache/talaria-bench)
bench: setup build-only build-drivers-only
	mkdir -p build/bench $(BENCH_DIR)
	TALARIA_BENCH_DIR=$(BENCH_DIR) TALARIA_BENCH_REPORT=$(CURDIR)/build/bench/stream.json \
		$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchtime 1x -timeout 30m ./backend/...
	bench/webkit.sh --scale-db $(BENCH_DIR)/scale.db --stream-report build/bench/stream.json

# Screenshots of the real app under Xvfb (approval card, vault card, a running
# background task, the Diagnostics view) into build/screenshots/; then each real ACP
# agent's turn (OpenCode, Hermes's ACP server) and the ACP agents settings. Both drive
# talaria-drivers.
screenshots: build-drivers
	scripts/screenshots.sh
	scripts/acp-screenshots.sh

# The store benchmarks, keeping the generated database between runs.
bench-store: setup
	bench/store.sh

# The crash-safety soak: the crash test with many more SIGKILLs (default 500).
soak: setup
	bench/crash-soak.sh

# Live development with hot reload; the window is also served at http://$(DEVSERVER).
# DEVSERVER and VITE_PORT move the two servers so several can run side by side.
DEVSERVER ?= localhost:34115
VITE_PORT ?= 5173
dev: setup-app
	TALARIA_VITE_PORT=$(VITE_PORT) $(WAILS) dev -tags $(TAGS) -devserver $(DEVSERVER) \
	  -frontenddevserverurl http://localhost:$(VITE_PORT)

# Regenerate frontend/wailsjs from the bound Go methods, the window's TypeScript
# contract (frontend/src/lib/protocol.gen.ts) from backend/contract, and the typed
# bindings of the bound services (frontend/src/lib/bindings.gen.ts, app/bindgen). The
# bindings build opens no database (desktop_bindings.go); TALARIA_HOME is a throwaway
# one all the same.
bindings: setup
	d=$$(mktemp -d) && TALARIA_HOME=$$d $(WAILS) generate module -tags $(TAGS); rc=$$?; rm -rf "$$d"; exit $$rc
	chmod 644 frontend/wailsjs/runtime/* # as `wails dev` writes them, so neither dirties the tree
	$(GO) run -tags $(TAGS) ./backend/contract/tsgen
	$(GO) run -tags $(TAGS) ./app/bindgen

# ---- The sandbox's adversarial suite (issue 10; backend/adversarial) -----------------
# `make adversarial`: the corpus with every wall up (part of test-go, so of `make test`):
# each entry asked, refused or confined with no effect outside the workspace; figures in
# build/adversarial/report.txt. `make adversarial-baseline`: the same corpus with the walls
# off (full access, YOLO; not part of make test), to show what the walls stop; figures in
# build/adversarial/report-walls-off.txt.
adversarial: setup
	$(GO) test -race -tags $(TAGS) -count=1 -timeout 30m -run 'TestAdversarialCorpus|TestFileToolRaces|Killed' -v ./backend/adversarial/
adversarial-baseline: setup
	ADVERSARIAL_WALLS=off $(GO) test -race -tags $(TAGS) -count=1 -timeout 30m -run TestAdversarialCorpus -v ./backend/adversarial/

# ---- Installing (issue 15) -------------------------------------------------------
# `make install` puts Talaria in the user's launcher: ~/.local/bin/talaria, the desktop
# entry, the hicolor icons, the AppStream metainfo and the man page (scripts/install.sh).
# PREFIX=/usr (as root) installs system-wide; DESTDIR stages the tree (packaging).
# `make uninstall` with the same PREFIX removes them again (the data folder stays).
PREFIX ?= $(HOME)/.local
export PREFIX DESTDIR

# The man page, generated from `talaria --help` and `--version` by help2man.
man: build/bin/talaria.1
build/bin/talaria.1: $(BIN) app/cli.go
	help2man --no-info --section 1 --source "Talaria $(VERSION)" --manual "User Commands" \
	  --name "a desktop app for chatting with an AI agent that works on your machine" \
	  --output $@ ./$(BIN)

install: build
	@$(MAKE) --no-print-directory install-only

install-only: man
	scripts/install.sh install

uninstall:
	scripts/install.sh uninstall

# ---- The Debian package (issue 15) ----------------------------------------------------
# `make package`: build/dist/talaria_<version>_amd64.deb with nfpm (scripts/package.sh).
# `make pkgtest`: lintian, then the .deb installed with dpkg -i + apt-get -f install into a
# fresh Debian 12 folder system (debootstrap, cached in .cache/pkgtest), where the
# installed `talaria --version` and, with the installed package's libraries,
# `talaria-drivers --selftest` (copied in) must pass (scripts/pkgtest.sh; root).
package: setup build
	@$(MAKE) --no-print-directory package-only
package-only: man
	VERSION="$(VERSION)" COMMIT="$(COMMIT)" BUILD_DATE="$(BUILD_DATE)" scripts/package.sh
pkgtest: package
	@$(MAKE) --no-print-directory build-drivers-only pkgtest-only
pkgtest-only:
	scripts/pkgtest.sh

# ---- Windows and macOS from here (issue 15; scripts/windows.sh) --------------------
# `make windows`: talaria.exe cross-built with mingw-w64, with the icon, a version
# resource and a GUI manifest, at build/bin/talaria.exe.
# `make platforms`: every Go test package of backend/ and sidecar/ compiled for Windows
# (its failure names the file that broke the Windows build), `GOOS=darwin go vet`, and
# the sidecar's protocol and tools tests run under wine (a report of which pass).
windows: setup
	cd frontend && npm run build
	@$(MAKE) --no-print-directory windows-only
windows-only:
	VERSION="$(VERSION)" LDFLAGS="$(LDFLAGS)" scripts/windows.sh build
platforms: setup
	@$(MAKE) --no-print-directory platforms-only
platforms-only:
	scripts/windows.sh tests
	VERSION="$(VERSION)" scripts/windows.sh wine

# The third-party notice (backend/about/third_party.json, shown by About, shipped in
# the .deb): the Go modules linked in (go-licenses, tools/golicenses) and the npm
# packages in the bundle (rollup-plugin-license). `make test` fails when it drifted.
GO_LICENSES := tools/bin/go-licenses
$(GO_LICENSES): tools/golicenses/go.mod
	cd tools/golicenses && $(GO) build -o ../bin/go-licenses github.com/google/go-licenses/v2
notices: setup $(GO_LICENSES)
	$(GO) run ./scripts/notices
notices-check: $(GO_LICENSES)
	$(GO) run ./scripts/notices -check

# Installs into a fresh home under Xvfb and starts the app from its desktop entry as a
# launcher does (gtk-launch, gio launch), its "New chat" action, the login entry into
# the tray, and uninstalls (scripts/desktopcheck.sh).
desktopcheck: build-only man
	scripts/desktopcheck.sh

clean:
	rm -rf build/bin build/smoke frontend/dist/assets build/dist build/pkgroot build/windows rsrc_windows_*.syso
