// boardgame.io's server for the anchor: `node server.js memory` or `node server.js file DIR`
// (its FlatFile store in DIR). Prints the port it listens on (127.0.0.1, chosen by the system).
const { Server, FlatFile } = require('boardgame.io/server');
const { Tongits } = require('./game');

const [store, dir] = process.argv.slice(2);
const db = store === 'file' ? new FlatFile({ dir, logging: false }) : undefined;
const server = Server({ games: [Tongits], db, origins: [] });
server.run({ port: 0 }).then(({ appServer }) => {
  console.log(`port ${appServer.address().port}`);
});
// a server outlives no parent
setInterval(() => { if (process.ppid === 1) process.exit(1); }, 500);
