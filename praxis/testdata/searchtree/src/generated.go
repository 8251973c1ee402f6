package main

// needle generated
