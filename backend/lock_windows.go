//go:build windows

package backend

import (
	"errors"
	"os"
)

// ErrDataDirInUse is wrapped by the error Open returns when another Talaria process
// holds the data folder.
var ErrDataDirInUse = errors.New("another Talaria is using this data folder")

// lockDataDir is a no-op on Windows, where Wails' single-instance lock guards the app.
func lockDataDir(dir string) (*os.File, error) { return nil, nil }
