package lib

// needle vendored
