needle vendored
