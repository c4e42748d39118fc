"""Loads a collection through QGIS's OAPIF provider with a Basic auth configuration, as a QGIS user
would add the layer; prints one JSON line: valid, the features' ids, and the provider's messages.
Run by Debian's Python with QT_QPA_PLATFORM=offscreen and HOME set to an empty directory."""
import json
import sys

from qgis.core import QgsApplication, QgsAuthMethodConfig, QgsVectorLayer

url, collection, key = sys.argv[1], sys.argv[2], sys.stdin.readline().strip()
QgsApplication.setPrefixPath('/usr', True)
app = QgsApplication([], False)
app.initQgis()
messages = []
QgsApplication.messageLog().messageReceived.connect(lambda m, tag, level: messages.append(f'{tag}: {m}'))
auth = QgsApplication.authManager()
auth.setMasterPassword('test-only-master-password', True)
config = QgsAuthMethodConfig()
config.setName('research-read-api')
config.setMethod('Basic')
config.setConfig('username', 'qgis')
config.setConfig('password', key)
stored = auth.storeAuthenticationConfig(config)
layer = QgsVectorLayer(f"url='{url}' typename='{collection}' authcfg='{config.id()}'", collection, 'OAPIF')
# An invalid layer's error() crashes QGIS 3.22's bindings: the message log says what went wrong.
ids = [str(f['id']) for f in layer.getFeatures()] if layer.isValid() else []
print(json.dumps({'stored': bool(stored[0]), 'valid': layer.isValid(), 'ids': ids, 'messages': messages[:20]}))
app.exitQgis()
