// Package dataget fetches public graph datasets that are too large to ship
// with graphfed, checks them, and converts them into the layouts graphfed's
// loaders read: the TSV layout of graph.LoadTSV for node classification,
// the LightGCN layout of graph.LoadLightGCN for recommendation.
//
// Every dataset of the catalog names a public repository at a pinned commit
// and, for each file it needs, the file's path, size and SHA-256, computed
// from the repository's bytes at that commit. A download whose size or hash
// differs is refused before anything is converted: the catalog pins
// content, not locations, so a moved branch, a corrupted mirror or a
// truncated transfer cannot turn into a silently different dataset. A
// dataset whose original bytes could not be checked is not in the catalog.
//
// Get downloads into a staging directory beside the destination and renames
// the converted dataset into place only once it has been read back by the
// loader, so an interrupted or failed run leaves nothing half-written where
// the dataset belongs.
//
// The converters read the publishers' own formats: numpy's .npz/.npy
// (npy.go), the protocol-2 Python pickles of the Planetoid files
// (pickle.go, a stack machine that builds values and never runs code), and
// tab-separated interaction lists. Each parser takes untrusted bytes and
// has a fuzz target.
package dataget
