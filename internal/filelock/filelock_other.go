//go:build !unix && !windows

package filelock

import (
	"errors"
	"os"
)

func tryLock(*os.File) error { return errors.ErrUnsupported }

func unlock(*os.File) error { return errors.ErrUnsupported }
