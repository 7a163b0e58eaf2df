CREATE TABLE "store_identity" (
	"name" text COLLATE "C" PRIMARY KEY NOT NULL,
	"value" text COLLATE "C" NOT NULL,
	"created_at" text COLLATE "C" NOT NULL
);
