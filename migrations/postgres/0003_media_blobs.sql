CREATE TABLE "media_blob_chunks" (
	"sha256" text COLLATE "C" NOT NULL,
	"seq" integer NOT NULL,
	"bytes" "bytea" NOT NULL,
	CONSTRAINT "media_blob_chunks_sha256_seq_pk" PRIMARY KEY("sha256","seq")
);
