/** DUCKDB_CONNECTIONS when none is set: twice the cores, at least 2. */
export declare function defaultDuckdbConnections(): number;
