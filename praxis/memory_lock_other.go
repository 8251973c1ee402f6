//go:build !unix

package praxis

import (
	"os"
	"sync"
)

// On systems without flock the memory lock only excludes writers within
// one process.
var memoryMu sync.Mutex

func tryLockFile(*os.File) (bool, error) { return memoryMu.TryLock(), nil }

func unlockFile(*os.File) { memoryMu.Unlock() }
