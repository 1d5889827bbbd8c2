// Every node of the graph, all users and labels: FalkorDB answers this from its label counts
// without reading a node (setup asks it to decide whether a reopen builds the vector indexes
// at once; count_nodes reads every node).
MATCH (n)
RETURN count(n) AS nodes
