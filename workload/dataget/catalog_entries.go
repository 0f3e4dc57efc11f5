package dataget

import (
	"graphfed/graph"
)

// The pinned sources. Every size and SHA-256 below was computed from the
// blob bytes of the named commit, after checking that the bytes hash to
// the blob id the commit's tree names (git hash-object), so they are the
// repository's own bytes. Files the repositories keep but that could not
// be obtained to hash (PubMed's ind.pubmed.allx; roman_empire, questions
// and amazon_ratings npz; LightGCN's Gowalla, Yelp2018 and Amazon-Book
// train.txt) are why those datasets are not offered.
const (
	planetoidRepo   = "kimiyoung/planetoid"
	planetoidCommit = "af6abf468a772cc055bec88c52e4d6f51b7c37e3"
	heteroRepo      = "yandex-research/heterophilous-graphs"
	heteroCommit    = "a431395582e929d88271309716bea4fe24ce6318"
	lightGCNPTRepo  = "gusye1234/LightGCN-PyTorch"
	lightGCNPTCommt = "947ca2b3b1d2d3545b114145710cb06c4e57b3d2"
)

func planetoidSpecs() []Spec {
	conv := tsvConverter(func(s Spec, read func(string) ([]byte, error)) (*graph.Dataset, error) {
		return convertPlanetoid(s.Name, read)
	})
	const how = "Kipf & Welling's load_data (gcn/utils.py): features and labels of allx/ally then of tx/ty placed at the ids of test.index, " +
		"public split (train the first len(y) nodes, val the next 500, test the ids of test.index), graph dict made undirected without self loops; " +
		"nodes missing from both (CiteSeer's isolated test nodes) have no features, label -1 and no split"
	return []Spec{{
		Name: "cora", Title: "Planetoid Cora: 2,708 papers, 5,278 citations, 1,433 binary word features, 7 classes",
		Layout: LayoutTSV, Repo: planetoidRepo, Commit: planetoidCommit, Licence: "MIT (repository)",
		Cite: "Yang, Cohen & Salakhutdinov, ICML 2016; Sen et al., AI Magazine 2008", Conversion: how, convert: conv,
		Files: []File{
			{"data/ind.cora.x", 22119, "23cfa55d91c6f624233f5eb7b6e3f141f1bd2b2ae39608a63cf5d084bb27baab"},
			{"data/ind.cora.y", 4054, "94465c14eb53e04ca262198dcbb2521ee8af60fb3f3d546cd6ca24a511b0e7d1"},
			{"data/ind.cora.tx", 148025, "b9afbaa4a400df991f6f02ef677e1e44da55ffc04801fd02f9e673987829226a"},
			{"data/ind.cora.ty", 28135, "41f5ac76596a1699cc33f53084a2419e92961c42bb75f36fc38e616d348532ad"},
			{"data/ind.cora.allx", 257305, "9419ba2f26f5c35243db64aba110e0f35a04851609e0dc5433450676ca6b8543"},
			{"data/ind.cora.ally", 47959, "2b998f5cc7fedc86e7f97ca2498f47a1ffc1462c29e2d578b23bf3f62b6e7d71"},
			{"data/ind.cora.graph", 59847, "58f13302f39dde8852dad6fe6d15b89b077b6d7f837626bce671ef80344b383d"},
			{"data/ind.cora.test.index", 5000, "297ce89af2b51a6a194181c7dbe1796c6a1cf9cd9349a88383b1b1e227867875"},
		},
	}, {
		Name: "citeseer", Title: "Planetoid CiteSeer: 3,327 papers (15 isolated test nodes without features or label), 4,552 citations, 3,703 binary word features, 6 classes",
		Layout: LayoutTSV, Repo: planetoidRepo, Commit: planetoidCommit, Licence: "MIT (repository)",
		Cite: "Yang, Cohen & Salakhutdinov, ICML 2016; Sen et al., AI Magazine 2008", Conversion: how, convert: conv,
		Files: []File{
			{"data/ind.citeseer.x", 31087, "d20de19150741e555de0ed037195630fc194114ebc7fd72ced62810148aa22f6"},
			{"data/ind.citeseer.y", 3014, "8ba87e515d8e3ee3cf52f6d2c5b86aa73f11ecad825a808455209ec26cd54924"},
			{"data/ind.citeseer.tx", 260321, "539a8906a2da97628d212f2fdd668c109a8b3f0d36574b59e5d3fd5b5303da21"},
			{"data/ind.citeseer.ty", 24135, "55e5bd1ba1e733a04598753ad1a8d57957f4b8f89e74519f41f4f4938767e4ce"},
			{"data/ind.citeseer.allx", 595021, "2ac30345d95c9ec933a817ee0bdd6a5f077f8c184a20e696910192d534414668"},
			{"data/ind.citeseer.ally", 55623, "f704b2d986dde6c2669934de1f3ae5696a6cf9455c0f6b2646a2d135ea0a1c95"},
			{"data/ind.citeseer.graph", 61987, "d79a4ef9d3e7169aee8946145f6b7306e35bc79bffad26346cfb94e10e9912a7"},
			{"data/ind.citeseer.test.index", 5000, "2af990671580b6b2df5d158d1038f8292e30c9cd821b5453f399659b25b723d4"},
		},
	}}
}

func heterophilousSpecs() []Spec {
	conv := tsvConverter(func(s Spec, read func(string) ([]byte, error)) (*graph.Dataset, error) {
		raw, err := read(s.Files[0].Base())
		if err != nil {
			return nil, err
		}
		return convertNPZGraph(s.Name, raw)
	})
	const how = "edges made undirected without self loops or repeats, non-zero features kept as float32, split 0 of the npz's ten, " +
		"metric roc_auc for two classes (as the authors' code scores them), accuracy otherwise"
	const cite = "Platonov et al., ICLR 2023"
	const citeGeom = "Pei et al. (Geom-GCN), ICLR 2020, as repackaged by Platonov et al., ICLR 2023"
	spec := func(name, title, cite, file string, size int64, sum string) Spec {
		return Spec{Name: name, Title: title, Layout: LayoutTSV, Repo: heteroRepo, Commit: heteroCommit, Licence: "MIT (repository)",
			Cite: cite, Conversion: how, convert: conv, Files: []File{{"data/" + file, size, sum}}}
	}
	return []Spec{
		spec("actor", "Actor (Geom-GCN film): 7,600 actors, 26,659 co-occurrence edges, 932 binary features, 5 classes", citeGeom,
			"actor.npz", 252956, "c350eef06b2c2a9bf8218be2b57cac6d4003d0922eb597a039e9123f75817816"),
		spec("chameleon", "Wikipedia chameleon: 2,277 pages, 31,371 links, 2,325 binary features, 5 classes (has near-duplicate nodes: see chameleon-filtered)", citeGeom,
			"chameleon.npz", 177840, "4c640bd2877fc4f9f101531e2f977bc16445a54e09a5cb01178df608e552f3fd"),
		spec("chameleon-filtered", "chameleon without the near-duplicate nodes Platonov et al. found leaking between train and test: 890 pages, 8,854 links", cite,
			"chameleon_filtered.npz", 58924, "bf46f07e1fb5249280447e5fe3100f3e82fc4b93ad1e13ffcfdec924b6ac0bb5"),
		spec("squirrel", "Wikipedia squirrel: 5,201 pages, 198,353 links, 2,089 binary features, 5 classes (has near-duplicate nodes: see squirrel-filtered)", citeGeom,
			"squirrel.npz", 704277, "d436e3b42c0546b105241c0ab0766097074e68e55f67b133eeb9b0162e55cbd9"),
		spec("squirrel-filtered", "squirrel without its near-duplicate nodes: 2,223 pages, 46,998 links", cite,
			"squirrel_filtered.npz", 208215, "f06370ffb3116c5de8b7a600005400b2293c025e0ce2f6916d8201a825505ac7"),
		spec("minesweeper", "Minesweeper: 100×100 grid, 10,000 nodes, 7 one-hot features, 2 classes (ROC-AUC)", cite,
			"minesweeper.npz", 135045, "e664c8dacf1e8ac466c2c09ed4b237bd2c5541f47a6eae9c6092cb87f16412b3"),
		spec("tolokers", "Tolokers: 11,758 crowd workers, 519,000 edges, 10 features, 2 classes (ROC-AUC)", cite,
			"tolokers.npz", 1329769, "dacf3ac94cec53d03cd2adb5255c08b33dee1656c33ca8164a464bd9450a1667"),
		spec("texas", "WebKB Texas: 183 pages, 279 links, 1,703 binary features, 5 classes", citeGeom,
			"texas.npz", 28586, "b164b99e6c3d43e4ab07488ec59bd8c815f90cbc1bd4cf425ce587d2b534d844"),
		spec("cornell", "WebKB Cornell: 183 pages, 277 links, 1,703 binary features, 5 classes", citeGeom,
			"cornell.npz", 30515, "684c54ba3daa13b0ba1f04a3d6dd1b1175c1ae9bdeb982851fd4ff96d3aac298"),
		spec("wisconsin", "WebKB Wisconsin: 251 pages, 450 links, 1,703 binary features, 5 classes", citeGeom,
			"wisconsin.npz", 41672, "2543c89838cfc75f737f7c4664cc1d097f8268602c20b2d1bd4f21407df9c074"),
	}
}

func lastFMSpec() Spec {
	return Spec{
		Name: "lastfm", Title: "Last.fm (HetRec 2011) as LightGCN-PyTorch splits it: 1,892 users, 4,489 artists, 42,135 training and 10,533 test interactions",
		Layout: LayoutLightGCN, Repo: lightGCNPTRepo, Commit: lightGCNPTCommt,
		Licence:    "no licence file in the repository; the HetRec 2011 Last.fm data is released by GroupLens for research use",
		Cite:       "Cantador, Brusilovsky & Kuflik, HetRec 2011; He et al. (LightGCN), SIGIR 2020",
		Conversion: "data1.txt (train) and test1.txt (test) rows user<TAB>artist<TAB>count, ids shifted to 0-based as the repository's loader does, counts dropped (implicit feedback)",
		Files: []File{
			{"data/lastfm/data1.txt", 579727, "c82af3228cbbda2f55a39244de09ed93292894f1d0d9f1908ebb57e27598fded"},
			{"data/lastfm/test1.txt", 144867, "de4417c0e6123284ce59a0934bcf5288ec1ec8774a18a1eef453c9952dfa48f9"},
		},
		convert: func(s Spec, read func(string) ([]byte, error), dir string) error {
			tr, err := read(s.Files[0].Base())
			if err != nil {
				return err
			}
			te, err := read(s.Files[1].Base())
			if err != nil {
				return err
			}
			d, err := convertPairs(s.Name, tr, te, s.Files[0].Base(), s.Files[1].Base())
			if err != nil {
				return err
			}
			return d.WriteLightGCN(dir)
		},
	}
}
