package app

import (
	"context"
	"sync"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/backend/history"
)

// Imports is bound to the window beside App: bringing the user's Hermes sessions and a
// Talaria web folder into the store (backend/history; docs/import.md). Progress reaches
// the window as history.EventProgress events (every bus event is forwarded).
type Imports struct {
	app  *App
	once sync.Once
	im   *history.Importer
}

// NewImports returns the Imports of a (bound in main.go's Bind list); a running import
// is cancelled at a's shutdown, before the store closes.
func NewImports(a *App) *Imports {
	m := &Imports{app: a}
	a.closers = append(a.closers, func(ctx context.Context) { m.importer().Close(ctx) })
	return m
}

func (m *Imports) importer() *history.Importer {
	m.once.Do(func() {
		svc := m.app.service()
		m.im = history.New(svc.Store, svc.Bus, svc.Agents())
	})
	return m.im
}

// StartHermesImport starts importing Hermes sessions (the chosen ones, or all of the
// profile) and returns the first progress.
func (m *Imports) StartHermesImport(req history.HermesRequest) (history.Progress, error) {
	p, err := m.importer().StartHermes(req)
	return lists(p), userError(err)
}

// ChooseWebFolder asks for Talaria web's data folder (or its sessions folder); "" when
// cancelled.
func (m *Imports) ChooseWebFolder() (string, error) {
	if m.app.ctx == nil {
		return "", errNotReady
	}
	dir, err := runtime.OpenDirectoryDialog(m.app.ctx, runtime.OpenDialogOptions{Title: "Import a Talaria web folder"})
	if err != nil {
		return "", fileError("the folder dialog failed: %w", err)
	}
	return dir, nil
}

// StartWebImport starts importing the Talaria web folder and returns the first
// progress.
func (m *Imports) StartWebImport(folder string) (history.Progress, error) {
	p, err := m.importer().StartWeb(history.WebRequest{Folder: folder})
	return lists(p), userError(err)
}

// CancelImport stops the running import jobID ("" = whichever runs) after the chat it
// is writing, and returns its progress (unchanged when it had ended).
func (m *Imports) CancelImport(jobID string) history.Progress {
	p, _ := m.importer().Cancel(jobID)
	return lists(p)
}

// ImportStatus returns the running or last import's progress (zero when none ran).
func (m *Imports) ImportStatus() history.Progress {
	return lists(m.importer().Status())
}
